// Hand-made records for the review tests: a timed case with chosen figures, a run with measured
// and datasheet ceilings, and a tag-balance check for the HTML and SVG the sinks write.
#pragma once

#include <regex>
#include <string>
#include <vector>

#include "harness/derive/measured_roofline.hpp"
#include "harness/record/record.hpp"

namespace kwb::test {

struct CaseSpec {
  std::string op = "rmsnorm_fwd";
  std::string variant = "fused_v1";
  Role role = Role::fused;
  DType dtype = DType::fp32;
  std::int64_t rows = 4096, cols = 4096;
  double median_us = 10;
  double intensity = 0.5;
  std::string bound = "memory";
  Disposition disposition = Disposition::passed;
};

// A timed, verified case whose derived figures follow from its median and a fixed 64 MiB model.
inline CaseRecord make_case(const CaseSpec& s) {
  CaseRecord c;
  c.op = s.op;
  c.variant = s.variant;
  c.role = s.role;
  c.dtype = s.dtype;
  c.shape.axes = {{"rows", s.rows}, {"cols", s.cols}};
  c.disposition = s.disposition;
  if (s.disposition == Disposition::failed) c.reason = "3 mismatches, first at y[7]";
  c.nvtx_range = s.op + ":" + s.variant + ":" + std::string(to_string(s.dtype)) + ":" + c.shape.to_compact();
  VerifyResult v;
  v.passed = s.disposition != Disposition::failed;
  v.sampling = "full";
  v.mismatches = v.passed ? 0 : 3;
  c.verify = v;
  TimingResult t;
  t.timer = "cupti";
  t.span.median = s.median_us;
  t.span.count = 100;
  t.kernels_per_sample = s.role == Role::baseline ? 6 : 1;
  c.timing = t;
  Derived d;
  d.model_bytes = double(s.rows) * double(s.cols) * 4;
  d.model_flops = d.model_bytes * s.intensity;
  d.bandwidth_gbps = d.model_bytes / (s.median_us * 1e3);
  d.tflops = d.model_flops / (s.median_us * 1e6);
  d.intensity = s.intensity;
  d.bound = s.bound;
  d.pct_of_bandwidth_ceiling = 100 * d.bandwidth_gbps / 3000;
  d.pct_of_roofline = d.pct_of_bandwidth_ceiling;
  c.derived = d;
  return c;
}

// Hardware counters of one sample, as `kwb run --counters memory,compute,occupancy` records them:
// DRAM bytes `traffic_ratio` times the case's model (half read, half written), FP32 FMAs for
// `flop_ratio` of its FLOPs, `useful_bytes` of each global-load sector used, in `kernels` equal
// kernels; the measured roofline derived from them as the session does.
struct CounterSpec {
  double traffic_ratio = 1.0;
  double flop_ratio = 1.0;
  double useful_bytes = 32;
  double l2_hit = 0.25;
  int kernels = 1;
};

inline void attach_counters(CaseRecord& c, const CounterSpec& s) {
  const Derived& d = *c.derived;
  const double sectors = d.model_bytes / 2 / 32;  // the inputs' half of the model, in 32-byte sectors
  const std::map<std::string, double> sample = {
      {"gpu__time_duration.sum", 1000 * c.timing->span.median},
      {"dram__bytes_read.sum", s.traffic_ratio * d.model_bytes / 2},
      {"dram__bytes_write.sum", s.traffic_ratio * d.model_bytes / 2},
      {"lts__t_sectors_lookup_hit.sum", s.l2_hit * 4 * sectors},
      {"lts__t_sectors_lookup_miss.sum", (1 - s.l2_hit) * 4 * sectors},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", sectors},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum", sectors / 8},
      {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", sectors / 4},
      {"smsp__sass_data_bytes_mem_global_op_ld.sum", s.useful_bytes * sectors},
      {"smsp__issue_active.sum", 3e6},
      {"smsp__cycles_active.sum", 1e7},
      {"sm__warps_active.sum", 0.6 * 64 * 2e6},
      {"sm__cycles_active.sum", 2e6},
      {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", s.flop_ratio * d.model_flops / 2}};
  CaseCounters k;
  k.source = "cupti";
  k.chip = "GH100";
  k.sets = {"memory", "compute", "occupancy"};
  for (const auto& [metric, value] : sample) k.metrics.push_back(metric);
  k.passes = 3;
  for (int i = 0; i < s.kernels; ++i) {
    KernelCounters kernel;
    kernel.name = "kernel_" + std::to_string(i);
    for (const auto& [metric, value] : sample) kernel.values[metric] = value / s.kernels;
    KernelLaunch launch;
    launch.registers_per_thread = 40 + 8 * i;
    launch.theoretical_occupancy = 1.0;
    launch.waves = 8;
    kernel.launch = launch;
    k.kernels.push_back(kernel);
  }
  k.total = total_over_kernels(k.kernels);
  c.counters = k;
  derive_measured(c);
}

inline RunInfo sample_run() {
  RunInfo r;
  r.tool_version = "0.1.0";
  r.git_sha = "abc123def456";
  r.command_line = "kwb run --op rmsnorm_fwd";
  r.host = "testhost";
  r.started_at = "2026-01-02T03:04:05Z";
  r.finished_at = "2026-01-02T03:05:05Z";
  r.complete = true;
  r.settings = {{"mode", "cold"}, {"flush", "dirty"}, {"preset", "default"}, {"timer", "cupti"}};
  DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.uuid = "GPU-0000";
  d.driver_version = 13000;
  d.runtime_version = 13000;
  d.cupti_version = 130001;
  d.driver_release = "580.1";
  r.device = d;
  Ceilings m;
  m.source = "measured";
  m.measured_at = "2026-01-02T03:00:00Z";
  m.dram_copy_gbps = 3000;
  m.dram_copy_method = "cudaMemcpyAsync 2048MiB clean";
  m.l2_copy_gbps = 6700;
  m.fp32_tflops = 64;
  m.tensor_tflops = {{"bf16", 700}};
  r.ceilings = m;
  Ceilings s;
  s.source = "datasheet";
  s.dram_copy_gbps = 3350;
  s.fp32_tflops = 67;
  s.tensor_tflops = {{"bf16", 989}};
  r.datasheet_ceilings = s;
  return r;
}

// Empty when every element opened is closed in order (self-closed ones count as both), else the
// first problem. The writers self-close void elements, so the page is well-formed XML.
inline std::string tag_balance_problem(const std::string& doc) {
  static const std::regex tag(R"(<(/?)([A-Za-z][A-Za-z0-9]*)\b[^<>]*?(/?)>)");
  std::vector<std::string> open;
  std::size_t pos = doc.find("<html");  // skip the doctype
  if (pos == std::string::npos) pos = 0;
  for (auto it = std::sregex_iterator(doc.begin() + static_cast<long>(pos), doc.end(), tag);
       it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    if (m[3].length()) continue;  // <x/>
    if (!m[1].length()) {
      open.push_back(m[2]);
    } else if (open.empty() || open.back() != m[2].str()) {
      return "</" + m[2].str() + "> closes " + (open.empty() ? "nothing" : "<" + open.back() + ">");
    } else {
      open.pop_back();
    }
  }
  return open.empty() ? "" : "<" + open.back() + "> never closed";
}

}  // namespace kwb::test
