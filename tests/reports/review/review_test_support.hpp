// Hand-made records for the review tests: a timed case with chosen figures, a run with measured
// and datasheet ceilings, and a tag-balance check for the HTML and SVG the sinks write.
#pragma once

#include <regex>
#include <string>
#include <vector>

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
