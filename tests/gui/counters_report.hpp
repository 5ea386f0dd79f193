// A small report whose cases carry hardware counters, for the app's tests (the Counters panel,
// the measured roofline, the counters side by side) and its screenshots.
//
// The cases are real H100 records from the committed samples (their timing, work model and
// roofline figures, and the sample's device and ceilings); the counters on them are SYNTHETIC:
// made up from each case's work model with a seeded jitter, shaped like what the range profiler
// returns (the metric names of kwb's own sets, per kernel, with launches and totals), and run
// through the harness's own derive_measured for the measured work and its flags. The run says
// so in its command line and host. Nothing here is a measurement of the kernels it names.
//
//   0 rmsnorm_fwd fused_v2_vec16          memory, compute, occupancy; ratio ~1.01; ncu beside
//   1 rmsnorm_fwd baseline_eager_8_launches  memory, occupancy over 8 kernels; ratio ~4 (flagged)
//   2 rmsnorm_fwd fused_v1_row_per_block  memory only (no FLOP counters)
//   3 softmax_fwd fused_v2_online_two_pass (fp32, 512 KiB rows)  ratio ~1.45 (flagged)
//   4 linear_bias_relu fused_v4_wgmma...  tensor set too; ratio ~1.25 (compute-bound: not flagged)
//   5 cross_entropy fused_v2...           counters asked for, unavailable (the reason)
//   6 swiglu_fwd fused_v1_flat_vec16      no counters
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/derive/measured_roofline.hpp"
#include "harness/plan/counter_sets.hpp"
#include "harness/record/json_report.hpp"
#include "tests/gui/gui_test_support.hpp"

namespace kwb::test {

// splitmix64: the same draws on every standard library.
class Jitter {
 public:
  explicit Jitter(std::uint64_t seed) : state_(seed) {}
  double uniform() {  // [0, 1)
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  }
  double around(double v, double spread) { return v * (1 + spread * (2 * uniform() - 1)); }

 private:
  std::uint64_t state_;
};

// What one synthetic kernel did, from which every metric of the sets is made up.
struct KernelTruth {
  std::string name;
  double read_bytes = 0, write_bytes = 0;  // DRAM
  double duration_ns = 0;
  double load_width = 16;   // bytes per thread per load (16: vectors of 16 bytes)
  double useful_share = 1;  // of each sector's 32 bytes, those the threads asked for
  double l1_hit = 0.02, l2_hit = 0.45;
  double warps_active = 48;  // resident warps per active SM cycle (of 64)
  double issue_active = 0.3, tensor_active = 0, sm_busy = 0.95;
  double fma_flops = 0, tensor_flops = 0;
  KernelLaunch launch;
};

inline KernelLaunch launch_of(std::int64_t blocks, std::int64_t threads, std::int64_t registers,
                              std::int64_t shared, std::int64_t blocks_per_sm) {
  KernelLaunch l;
  l.grid[0] = blocks, l.grid[1] = l.grid[2] = 1;
  l.block[0] = threads, l.block[1] = l.block[2] = 1;
  l.registers_per_thread = registers;
  l.dynamic_shared_bytes = shared;
  l.blocks_per_sm = blocks_per_sm;
  l.theoretical_occupancy = static_cast<double>(blocks_per_sm * threads / 32) / 64;
  l.waves = static_cast<double>(blocks) / (132.0 * blocks_per_sm);
  return l;
}

// Every requested metric of one kernel, from its truth, each with a jitter of +-0.4%.
inline std::map<std::string, double> metric_values(const KernelTruth& t,
                                                   const std::vector<std::string>& metrics,
                                                   Jitter& jitter) {
  const double elapsed = t.duration_ns * 1.98 * 132;  // SM cycles over 132 SMs at 1980 MHz
  const double active = elapsed * t.sm_busy;
  const double ld_sectors = t.read_bytes / 32 / t.useful_share;
  const double st_sectors = t.write_bytes / 32 / t.useful_share;
  const double lookups = (t.read_bytes + t.write_bytes) / 32;
  const double issued = active * 4 * t.issue_active;
  const std::map<std::string, double> truth = {
      {"gpu__time_duration.sum", t.duration_ns},
      {"dram__bytes_read.sum", t.read_bytes},
      {"dram__bytes_write.sum", t.write_bytes},
      {"lts__t_sectors_op_read.sum", ld_sectors},
      {"lts__t_sectors_op_write.sum", st_sectors},
      {"lts__t_sectors_lookup_hit.sum", lookups * t.l2_hit},
      {"lts__t_sectors_lookup_miss.sum", lookups * (1 - t.l2_hit)},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", ld_sectors},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum", ld_sectors * t.l1_hit},
      {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", t.read_bytes / (32 * t.load_width)},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", st_sectors},
      {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", t.write_bytes / (32 * t.load_width)},
      {"smsp__sass_data_bytes_mem_global_op_ld.sum", t.read_bytes},
      {"smsp__sass_data_bytes_mem_global_op_st.sum", t.write_bytes},
      {"sm__cycles_elapsed.sum", elapsed},
      {"sm__cycles_active.sum", active},
      {"smsp__cycles_active.sum", active * 4},
      {"smsp__issue_active.sum", issued},
      {"sm__inst_executed.sum", issued},
      {"sm__inst_executed_pipe_alu.sum", issued * 0.25},
      {"sm__inst_executed_pipe_fma.sum", issued * 0.3},
      {"sm__inst_executed_pipe_fp64.sum", 0},
      {"sm__inst_executed_pipe_lsu.sum", issued * 0.2},
      {"sm__inst_executed_pipe_xu.sum", issued * 0.02},
      {"sm__inst_executed_pipe_tensor.sum", t.tensor_flops / 4096},
      {"sm__inst_executed_pipe_uniform.sum", issued * 0.05},
      {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", t.fma_flops / 2},
      {"sm__sass_thread_inst_executed_op_fadd_pred_on.sum", t.fma_flops / 16},
      {"sm__sass_thread_inst_executed_op_fmul_pred_on.sum", t.fma_flops / 16},
      {"sm__pipe_tensor_cycles_active.sum", elapsed * t.tensor_active},
      {"sm__inst_executed_pipe_tensor_op_gmma.sum", t.tensor_flops / 4096},
      {"sm__inst_executed_pipe_tensor_op_hmma.sum", 0},
      {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", t.tensor_flops},
      {"sm__ops_path_tensor_src_fp16.sum", 0},
      {"sm__ops_path_tensor_src_tf32_dst_fp32.sum", 0},
      {"sm__ops_path_tensor_src_fp8.sum", 0},
      {"sm__warps_active.sum", active * t.warps_active},
      {"sm__ctas_launched.sum", static_cast<double>(t.launch.blocks())},
      {"smsp__warps_launched.sum",
       static_cast<double>(t.launch.blocks() * t.launch.threads_per_block() / 32)},
  };
  std::map<std::string, double> values;
  for (const std::string& m : metrics) values[m] = jitter.around(truth.at(m), 0.004);
  return values;
}

inline CaseCounters synthetic_counters(const std::vector<std::string>& sets,
                                       const std::vector<KernelTruth>& kernels, Jitter& jitter) {
  CaseCounters c;
  c.source = "cupti";
  c.chip = "GH100";
  c.sets = sets;
  c.metrics = parse_counter_request(sets, {}).metrics;
  c.passes = static_cast<int>(sets.size()) + 1;
  c.note = "synthetic values (tests/gui/counters_report.hpp)";
  for (const KernelTruth& t : kernels)
    c.kernels.push_back({t.name, metric_values(t, c.metrics, jitter), t.launch});
  c.total = total_over_kernels(c.kernels);
  return c;
}

// One streaming kernel over the case's model bytes, `ratio` times what the model says it moves.
inline KernelTruth streaming_truth(const CaseRecord& c, std::string name, double ratio,
                                   KernelLaunch launch) {
  KernelTruth t;
  t.name = std::move(name);
  const double bytes = c.derived->model_bytes * ratio;
  t.write_bytes = bytes * c.derived->write_fraction;
  t.read_bytes = bytes - t.write_bytes;
  t.duration_ns = c.timing->span.median * 1000;
  t.fma_flops = c.derived->model_flops;
  t.launch = launch;
  return t;
}

inline Report counters_report() {
  const Report review = read_report_json(kSampleReport);
  const Report ladder = read_report_json(KWB_SOURCE_DIR "/samples/h100-linear-ladder/report.json");
  Report r;
  r.run = review.run;
  r.run.command_line = "synthetic counters on H100 sample records (tests/gui/counters_report.hpp)";
  r.run.host = "synthetic";
  r.run.device->chip = "GH100";
  Jitter jitter(20261126);
  auto add = [&](CaseRecord c) {
    c.index = static_cast<int>(r.cases.size());
    derive_measured(c);
    r.cases.push_back(std::move(c));
  };

  {  // 0: one kernel moving what the model says, Nsight Compute's import beside it
    CaseRecord c = review.cases.at(7);
    const KernelTruth t = streaming_truth(c, "kwb::rmsnorm::fused_v2_vec16_kernel<__nv_bfloat16>",
                                          1.01, launch_of(65536, 256, 32, 0, 8));
    c.counters = synthetic_counters({"memory", "compute", "occupancy"}, {t}, jitter);
    CaseCounters ncu = *c.counters;
    ncu.source = "ncu";
    ncu.note = "ncu --csv --page raw, imported (synthetic values)";
    for (auto& [metric, value] : ncu.kernels[0].values)
      value = metric == "lts__t_sectors_op_write.sum" ? value * 1.03 : jitter.around(value, 0.005);
    ncu.total = total_over_kernels(ncu.kernels);
    c.ncu_counters = ncu;
    add(std::move(c));
  }
  {  // 1: eight launches, each reading and writing the whole tensor (4x the model's bytes)
    CaseRecord c = review.cases.at(5);
    std::vector<KernelTruth> kernels;
    for (int k = 0; k < 8; ++k) {
      KernelTruth t = streaming_truth(c, fmt::format("kwb::eager_map_kernel<step {}>", k + 1),
                                      4.0 / 8, launch_of(131072, 256, 24, 0, 8));
      t.duration_ns /= 8;
      t.warps_active = 56;
      kernels.push_back(t);
    }
    kernels[3].launch = launch_of(65536, 1024, 40, 4096, 2);  // the row reduction
    kernels[3].useful_share = 0.6;  // a strided read of each row's partial sums
    c.counters = synthetic_counters({"memory", "occupancy"}, kernels, jitter);
    add(std::move(c));
  }
  {  // 2: the memory set alone: DRAM bytes, no FLOP counters
    CaseRecord c = review.cases.at(6);
    c.counters =
        synthetic_counters({"memory"},
                           {streaming_truth(c, "kwb::rmsnorm::row_per_block_kernel<__nv_bfloat16>",
                                            1.0, launch_of(65536, 512, 30, 0, 4))},
                           jitter);
    add(std::move(c));
  }
  {  // 3: a second pass over rows that L2 only half holds (the record runs at 65% of its roof)
    CaseRecord c = review.cases.at(44);
    KernelTruth t = streaming_truth(c, "kwb::softmax::online_two_pass_kernel<float>", 1.45,
                                    launch_of(8192, 1024, 64, 8192, 2));
    t.l2_hit = 0.3;
    t.warps_active = 20;  // blocks of 1024 threads, 2 per SM, and a partial last wave
    c.counters = synthetic_counters({"memory", "compute", "occupancy"}, {t}, jitter);
    add(std::move(c));
  }
  {  // 4: a tensor-core GEMM re-reading its tiles
    CaseRecord c = ladder.cases.at(7);
    KernelTruth t =
        streaming_truth(c, "kwb::hopper::gemm_tn_warp_specialized<__nv_bfloat16, 128x256x64>", 1.25,
                        launch_of(132, 384, 168, 200 * 1024, 1));
    t.fma_flops = 0;
    t.tensor_flops = c.derived->model_flops;
    t.tensor_active = 0.88;
    t.issue_active = 0.12;
    t.l2_hit = 0.9;
    t.warps_active = 12;
    c.counters = synthetic_counters({"memory", "compute", "tensor", "occupancy"}, {t}, jitter);
    add(std::move(c));
  }
  {  // 5: asked for, not readable
    CaseRecord c = review.cases.at(90);
    c.counters = CaseCounters{};
    c.counters->source = "cupti";
    c.counters->chip = "GH100";
    c.counters->sets = {"memory"};
    c.counters->metrics = parse_counter_request({"memory"}, {}).metrics;
    c.counters->unavailable =  // the worker's words for the most common refusal
        "no permission to read GPU counters (ERR_NVGPUCTRPERM): the driver keeps them for "
        "administrators. Run as root, or set the nvidia module option "
        "NVreg_RestrictProfilingToAdminUsers=0 and reload the driver";
    add(std::move(c));
  }
  add(review.cases.at(58));  // 6: no counters asked for
  return r;
}

// The report above as a file in `dir`, for the app to open.
inline std::filesystem::path write_counters_report(const std::filesystem::path& dir) {
  const auto path = dir / "counters-report.json";
  write_report_json(path, counters_report());
  return path;
}

}  // namespace kwb::test
