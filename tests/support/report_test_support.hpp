// Shared by the report tests: a self-cleaning temp folder, sample reports, and a field-by-field
// comparison (the record structs have no operator==, and a failure should say which field).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <string>

#include "harness/record/atomic_file.hpp"
#include "harness/record/json_report.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb::test {

inline SummaryStats sample_stats(double base) {
  SummaryStats s;
  s.count = 137;
  s.median = base;
  s.p10 = base * 0.97;
  s.p90 = base * 1.03 + 0.1;
  s.min = base - 1.0 / 3.0;
  s.max = base + 1e-7;
  s.mean = base + 0.1 + 0.2;
  s.stdev = 0.1 + 0.2;
  s.noise = 0.0123456789;
  return s;
}

// Counters of two kernels (the second launched without the first's shape figures known) with
// non-round values.
inline CaseCounters sample_counters(const std::string& source) {
  CaseCounters c;
  c.source = source;
  c.chip = "GH100";
  c.sets = {"memory", "occupancy"};
  c.metrics = {"gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "sm__warps_active.sum",
               "lts__t_sector_hit_rate.pct"};
  c.passes = 4;
  c.note = "4 replay passes of the launch (a range per kernel), each after the variant's reset and the L2 flushed (clean)";
  KernelCounters first;
  first.name = "rmsnorm_kernel<bf16, 16>";
  first.values = {{"gpu__time_duration.sum", 10240}, {"dram__bytes_read.sum", 268443648.0 + 1.0 / 3.0},
                  {"dram__bytes_write.sum", 134221824}, {"sm__warps_active.sum", 6.02e23},
                  {"lts__t_sector_hit_rate.pct", 0.1 + 0.2}};
  KernelLaunch launch;
  launch.grid[0] = 16384, launch.grid[1] = 3, launch.grid[2] = 1;
  launch.block[0] = 256, launch.block[1] = 2, launch.block[2] = 1;
  launch.registers_per_thread = 40;
  launch.static_shared_bytes = 4096;
  launch.dynamic_shared_bytes = 65536 + 1;
  launch.blocks_per_sm = 3;
  launch.theoretical_occupancy = 1.0 / 3.0;
  launch.waves = 16384.0 * 3 / (3 * 132);
  first.launch = launch;
  KernelCounters second;
  second.name = "kernel 1";
  second.values = {{"gpu__time_duration.sum", 0.5}, {"dram__bytes_read.sum", 0}, {"dram__bytes_write.sum", 32}};
  c.kernels = {first, second};
  c.total = total_over_kernels(c.kernels);
  return c;
}

// A case with every optional set and deliberately non-round numbers.
inline CaseRecord rich_case(int index, Shape shape) {
  CaseRecord c;
  c.index = index;
  c.op = "rmsnorm";
  c.variant = "fused_v2";
  c.role = Role::baseline;
  c.dtype = DType::bf16;
  c.shape = std::move(shape);
  c.uses = {"cuBLASLt", "cuDNN"};
  c.math = "bf16, fp32 acc";
  c.disposition = Disposition::failed;
  c.reason = "2 mismatches, first at out[17]";

  VerifyResult v;
  v.passed = false;
  v.atol = 1e-3;
  v.rtol = 7.8125e-3;
  v.elements_checked = 16793600;
  v.mismatches = 2;
  v.nonfinite_mismatches = 1;
  v.unwritten = 3;
  v.all_zero = true;
  v.max_abs_err = 0.1 + 0.2;
  v.max_rel_err = 1.0 / 3.0;
  v.rel_l2_err = 1e-300;
  v.rows_checked = 512;
  v.rows_total = 4096;
  v.first_mismatches = {{"out", 17, 1.5, 1.25}, {"rstd", 4095, -0.0625, 2.0 / 3.0}};
  v.sampling = "sampled 512 of 4096 along rows";
  v.sampled_block_starts = {0, 77, 1031, 4064};
  v.sampled_block_length = 32;
  v.worst_bound_fraction = 1.0 / 3.0;
  v.oracle_source = "cache";
  v.outputs = {
      {"out", ElemType::bf16, 8e-3, 1.6e-2, 1.0 / 3.0 * 1e-6, 0.1 + 0.2, 1.0 / 3.0, 4194304, 33554432, true, true, 1, 3, 2, 1, 0.1 + 0.2, 1.0 / 3.0, false},
      {"rstd", ElemType::fp32, 1e-5 + 1e-9, 1.0 / 7.0, 0, 0, 0.0625, 4096, 4096, false, true, 0, 0, 0, 0, 6.02e-23, 0, true},
  };
  c.verify = v;

  TimingResult t;
  t.timer = "cupti";
  t.mode = Mode::hot;
  t.preset = "precise";
  t.span = sample_stats(12.345678901234567);
  t.busy = sample_stats(11.1);
  t.kernel_sum = sample_stats(10.9);
  t.kernels_per_sample = 2;
  t.kernels = {{"rmsnorm_kernel<bf16>", 1, 6.02e-1}, {"scale, add", 3, 4.4}};
  t.stop_reason = StopReason::time_limit;
  t.warmup_ms = 100.25;
  t.measure_wall_ms = 1500.0000000000002;
  t.samples_us = {12.3, 12.4, 0.1 + 0.2, 6.02e23};
  t.flush = "none";
  t.launch_overhead_us = 2.0 / 3.0 + 1e-9;
  ClockSummary clocks;
  clocks.sm_min_mhz = 1755.0000000000002;
  clocks.sm_max_mhz = 1980;
  clocks.sm_mean_mhz = 1901.0 / 3.0 * 3.0 + 0.1;
  clocks.sm_rated_max_mhz = 1980;
  clocks.readings = 14;
  clocks.samples = 137;
  clocks.throttled_samples = 9;
  clocks.throttle_reasons = {"sw_power_cap", "hw_thermal_slowdown"};
  t.clocks = clocks;
  t.output_check = "bit-identical to the verified output: the last sample of each of 3 batches ran on poisoned "
                   "outputs, compared on the device in every element";
  c.timing = t;

  Derived d;
  d.model_bytes = 134348800;
  d.model_flops = 6.7e7 + 0.5;
  d.bandwidth_gbps = 3141.5926535;
  d.tflops = 0.1 + 0.7;
  d.intensity = 0.49999999999999994;
  d.bound = "memory";
  d.roofline_tflops = 1.6707;
  d.pct_of_roofline = 47.88;
  d.pct_of_bandwidth_ceiling = 93.1;
  d.pct_of_l2_ceiling = 41.7;
  d.speedup_vs_baseline = 1.0 / 7.0;
  d.baseline_variant = "torch_eager";
  d.baseline_math = "fp32";
  MeasuredWork measured;
  measured.dram_bytes = 402653184.0 + 1.0 / 3.0;
  measured.traffic_ratio = 1.0 + 1.0 / 7.0;
  measured.flops = 6.7e7 * 2;
  measured.flop_ratio = 2.0 / 3.0;
  measured.intensity = 0.1 + 0.2;
  measured.flags = {"moves 14% more DRAM traffic than the work model (ratio 1.14)", "a \"quoted\" flag"};
  d.measured = measured;
  c.derived = d;
  c.counters = sample_counters("cupti");
  c.ncu_counters = sample_counters("ncu");
  c.ncu_counters->kernels.pop_back();
  c.ncu_counters->kernels[0].launch.reset();

  c.workspace_bytes = 5 * 4096 * 4;
  c.device_memory_bytes = 2 << 20;
  c.nvtx_range = "rmsnorm:fused_v2:bf16:4096x4100";
  c.repro = R"(kwb run --op rmsnorm --variant fused_v2 --axis "rows=4096,cols=4100" --note "say ""hi""")";
  return c;
}

inline Ceilings sample_ceilings(const std::string& source, double scale) {
  Ceilings c;
  c.source = source;
  c.measured_at = source == "measured" ? "2025-05-01" : "";
  c.dram_copy_gbps = 3000.7 * scale;
  c.dram_read_gbps = 3350.1 * scale;
  c.fp32_tflops = 66.9 * scale;
  c.tensor_tflops = {{"bf16", 989.4 * scale}, {"fp16", 989.5 * scale}, {"tf32", 494.7 * scale}};
  c.dram_copy_method = "cudaMemcpyAsync 2048MiB clean";
  c.dram_copy_by_method = {{"cudaMemcpyAsync 2048MiB clean", 3000.7 * scale},
                           {"copy_stream<4> 4x512 1024MiB dirty", 2900.1 * scale}};
  c.l2_copy_gbps = 9876.5 * scale;
  c.l2_working_set_bytes = 13107200;
  if (source == "measured") c.tensor_sm_mhz = {{"bf16", 1980.0}, {"fp16", 1965.5}, {"tf32", 1972.25}};
  return c;
}

// Every optional set; case 0 has axes rows-then-cols, case 1 cols-then-rows.
inline Report rich_report() {
  Report r;
  r.run.tool_version = "0.3.1";
  r.run.git_sha = "0123456789abcdef0123456789abcdef01234567";
  r.run.command_line = "kwb run --op rmsnorm --mode hot";
  r.run.host = "gpu-node-7";
  r.run.started_at = "2025-05-01T12:00:00Z";
  r.run.finished_at = "2025-05-01T12:03:07Z";
  r.run.complete = true;
  r.run.settings = {{"mode", "hot"}, {"preset", "precise"}, {"seed", "42"}, {"filter", "rms*"}};
  DeviceInfo d;
  d.index = 1;
  d.name = "NVIDIA H100 80GB HBM3";
  d.uuid = "GPU-1234abcd-0000-1111-2222-333344445555";
  d.sm_count = 132;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_clock_mhz = 1980.5;
  d.mem_clock_mhz = 2619.0000000000005;
  d.mem_bus_width_bits = 5120;
  d.global_mem_bytes = 85029158912;
  d.l2_bytes = 52428800;
  d.driver_version = 13000;
  d.runtime_version = 12080;
  d.cupti_version = 4000000000u;  // above INT32_MAX: must stay unsigned
  d.chip = "GH100";
  d.driver_release = "580.159.04";
  r.run.device = d;
  r.run.ceilings = sample_ceilings("measured", 1.0 / 3.0);
  r.run.datasheet_ceilings = sample_ceilings("datasheet", 1.0);
  r.run.suite = SuiteInfo{.name = "nightly", .path = "suites/nightly.yaml", .default_threshold = 0.03,
                          .op_thresholds = {{"rmsnorm_fwd", 0.02}, {"softmax_fwd", 1.0 / 3.0}}};

  r.cases.push_back(rich_case(0, Shape{{{"rows", 4096}, {"cols", 4100}}}));
  CaseRecord second = rich_case(1, Shape{{{"cols", 4100}, {"rows", 4096}}});
  second.role = Role::vendor;
  second.dtype = DType::fp16;
  second.disposition = Disposition::passed;
  second.timing->mode = Mode::cold;
  second.timing->flush = "clean";
  second.timing->clocks.reset();  // NVML unavailable: absent, not zero
  second.timing->launch = LaunchKind::graph;
  second.timing->launch_overhead_us.reset();  // not measured (the events timer): absent
  second.timing->stop_reason = StopReason::max_samples;
  r.cases.push_back(second);
  return r;
}

// Every optional absent: a skipped case and a run without a device.
inline Report bare_report() {
  Report r;
  r.run.tool_version = "0.3.1";
  r.run.complete = false;
  CaseRecord c;
  c.index = 0;
  c.op = "softmax";
  c.variant = "naive";
  c.shape = Shape{{{"cols", 7}}};
  c.disposition = Disposition::skipped;
  c.reason = "needs compute capability 9.0";
  r.cases.push_back(c);
  return r;
}

// NaN equals NaN here: the question is whether the value survived, not IEEE comparison.
inline void expect_same_double(double a, double b, const char* what) {
  if (std::isnan(a) && std::isnan(b)) return;
  EXPECT_EQ(a, b) << what;  // exact: a round trip must not lose a single bit
}

#define KWB_SAME(field) EXPECT_EQ(a.field, b.field) << #field
#define KWB_SAME_D(field) expect_same_double(a.field, b.field, #field)

inline void expect_same(const SummaryStats& a, const SummaryStats& b) {
  KWB_SAME(count);
  KWB_SAME_D(median);
  KWB_SAME_D(p10);
  KWB_SAME_D(p90);
  KWB_SAME_D(min);
  KWB_SAME_D(max);
  KWB_SAME_D(mean);
  KWB_SAME_D(stdev);
  KWB_SAME_D(noise);
}

inline void expect_same(const VerifyResult& a, const VerifyResult& b) {
  KWB_SAME(passed);
  KWB_SAME_D(atol);
  KWB_SAME_D(rtol);
  KWB_SAME(elements_checked);
  KWB_SAME(mismatches);
  KWB_SAME(nonfinite_mismatches);
  KWB_SAME(unwritten);
  KWB_SAME(all_zero);
  KWB_SAME_D(max_abs_err);
  KWB_SAME_D(max_rel_err);
  KWB_SAME_D(rel_l2_err);
  KWB_SAME(rows_checked);
  KWB_SAME(rows_total);
  KWB_SAME(sampling);
  KWB_SAME(oracle_source);
  ASSERT_EQ(a.outputs.size(), b.outputs.size());
  for (std::size_t i = 0; i < a.outputs.size(); ++i) {
    SCOPED_TRACE("outputs[" + std::to_string(i) + "]");
    const OutputCheck& x = a.outputs[i];
    const OutputCheck& y = b.outputs[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.elem, y.elem);
    expect_same_double(x.atol, y.atol, "atol");
    expect_same_double(x.rtol, y.rtol, "rtol");
    EXPECT_EQ(x.elements_checked, y.elements_checked);
    EXPECT_EQ(x.elements_total, y.elements_total);
    EXPECT_EQ(x.sampled, y.sampled);
    EXPECT_EQ(x.device_scanned, y.device_scanned);
    EXPECT_EQ(x.nonfinite, y.nonfinite);
    EXPECT_EQ(x.unwritten, y.unwritten);
    EXPECT_EQ(x.mismatches, y.mismatches);
    EXPECT_EQ(x.nonfinite_mismatches, y.nonfinite_mismatches);
    expect_same_double(x.max_abs_err, y.max_abs_err, "max_abs_err");
    expect_same_double(x.max_rel_err, y.max_rel_err, "max_rel_err");
    EXPECT_EQ(x.passed, y.passed);
  }
  ASSERT_EQ(a.first_mismatches.size(), b.first_mismatches.size());
  for (std::size_t i = 0; i < a.first_mismatches.size(); ++i) {
    SCOPED_TRACE("first_mismatches[" + std::to_string(i) + "]");
    const Mismatch& x = a.first_mismatches[i];
    const Mismatch& y = b.first_mismatches[i];
    EXPECT_EQ(x.tensor, y.tensor);
    EXPECT_EQ(x.index, y.index);
    expect_same_double(x.got, y.got, "got");
    expect_same_double(x.expected, y.expected, "expected");
  }
}

inline void expect_same(const TimingResult& a, const TimingResult& b) {
  KWB_SAME(timer);
  KWB_SAME(mode);
  KWB_SAME(flush);
  KWB_SAME(launch);
  KWB_SAME(preset);
  { SCOPED_TRACE("span"); expect_same(a.span, b.span); }
  { SCOPED_TRACE("busy"); expect_same(a.busy, b.busy); }
  { SCOPED_TRACE("kernel_sum"); expect_same(a.kernel_sum, b.kernel_sum); }
  KWB_SAME(kernels_per_sample);
  ASSERT_EQ(a.kernels.size(), b.kernels.size());
  for (std::size_t i = 0; i < a.kernels.size(); ++i) {
    SCOPED_TRACE("kernels[" + std::to_string(i) + "]");
    EXPECT_EQ(a.kernels[i].name, b.kernels[i].name);
    EXPECT_EQ(a.kernels[i].launches_per_sample, b.kernels[i].launches_per_sample);
    expect_same_double(a.kernels[i].median_us, b.kernels[i].median_us, "median_us");
  }
  KWB_SAME(stop_reason);
  KWB_SAME_D(warmup_ms);
  KWB_SAME_D(measure_wall_ms);
  KWB_SAME(output_check);
  ASSERT_EQ(a.launch_overhead_us.has_value(), b.launch_overhead_us.has_value());
  if (a.launch_overhead_us) expect_same_double(*a.launch_overhead_us, *b.launch_overhead_us, "launch_overhead_us");
  ASSERT_EQ(a.clocks.has_value(), b.clocks.has_value());
  if (a.clocks) {
    SCOPED_TRACE("clocks");
    KWB_SAME_D(clocks->sm_min_mhz);
    KWB_SAME_D(clocks->sm_max_mhz);
    KWB_SAME_D(clocks->sm_mean_mhz);
    KWB_SAME_D(clocks->sm_rated_max_mhz);
    KWB_SAME(clocks->readings);
    KWB_SAME(clocks->samples);
    KWB_SAME(clocks->throttled_samples);
    KWB_SAME(clocks->throttle_reasons);
  }
  ASSERT_EQ(a.samples_us.size(), b.samples_us.size());
  for (std::size_t i = 0; i < a.samples_us.size(); ++i)
    expect_same_double(a.samples_us[i], b.samples_us[i], "samples_us");
}

inline void expect_same(const MeasuredWork& a, const MeasuredWork& b) {
  KWB_SAME_D(dram_bytes);
  KWB_SAME_D(traffic_ratio);
  KWB_SAME(flops);  // optional<double>: exact
  KWB_SAME(flop_ratio);
  KWB_SAME(intensity);
  KWB_SAME(flags);
}

inline void expect_same(const CaseCounters& a, const CaseCounters& b) {
  KWB_SAME(source);
  KWB_SAME(chip);
  KWB_SAME(sets);
  KWB_SAME(metrics);
  KWB_SAME(passes);
  KWB_SAME(note);
  KWB_SAME(unavailable);
  KWB_SAME(total);  // exact double equality inside the map
  ASSERT_EQ(a.kernels.size(), b.kernels.size());
  for (std::size_t i = 0; i < a.kernels.size(); ++i) {
    SCOPED_TRACE("kernels[" + std::to_string(i) + "]");
    KWB_SAME(kernels[i].name);
    KWB_SAME(kernels[i].values);
    ASSERT_EQ(a.kernels[i].launch.has_value(), b.kernels[i].launch.has_value());
    if (!a.kernels[i].launch) continue;
    const KernelLaunch &x = *a.kernels[i].launch, &y = *b.kernels[i].launch;
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(x.grid[d], y.grid[d]) << "grid[" << d << "]";
      EXPECT_EQ(x.block[d], y.block[d]) << "block[" << d << "]";
    }
    EXPECT_EQ(x.registers_per_thread, y.registers_per_thread);
    EXPECT_EQ(x.static_shared_bytes, y.static_shared_bytes);
    EXPECT_EQ(x.dynamic_shared_bytes, y.dynamic_shared_bytes);
    EXPECT_EQ(x.blocks_per_sm, y.blocks_per_sm);
    expect_same_double(x.theoretical_occupancy, y.theoretical_occupancy, "theoretical_occupancy");
    expect_same_double(x.waves, y.waves, "waves");
  }
}

inline void expect_same(const Derived& a, const Derived& b) {
  KWB_SAME_D(model_bytes);
  KWB_SAME_D(model_flops);
  KWB_SAME_D(bandwidth_gbps);
  KWB_SAME_D(tflops);
  KWB_SAME_D(intensity);
  KWB_SAME(bound);
  KWB_SAME_D(roofline_tflops);
  KWB_SAME_D(pct_of_roofline);
  KWB_SAME_D(pct_of_bandwidth_ceiling);
  ASSERT_EQ(a.pct_of_l2_ceiling.has_value(), b.pct_of_l2_ceiling.has_value());
  if (a.pct_of_l2_ceiling) expect_same_double(*a.pct_of_l2_ceiling, *b.pct_of_l2_ceiling, "pct_of_l2_ceiling");
  ASSERT_EQ(a.speedup_vs_baseline.has_value(), b.speedup_vs_baseline.has_value());
  if (a.speedup_vs_baseline)
    expect_same_double(*a.speedup_vs_baseline, *b.speedup_vs_baseline, "speedup_vs_baseline");
  KWB_SAME(baseline_variant);
  KWB_SAME(baseline_math);
  ASSERT_EQ(a.measured.has_value(), b.measured.has_value());
  if (a.measured) { SCOPED_TRACE("measured"); expect_same(*a.measured, *b.measured); }
}

inline void expect_same(const CaseRecord& a, const CaseRecord& b) {
  KWB_SAME(index);
  KWB_SAME(op);
  KWB_SAME(variant);
  KWB_SAME(role);
  KWB_SAME(dtype);
  KWB_SAME(shape.axes);  // vector of pairs: order matters
  KWB_SAME(tunables);
  KWB_SAME(uses);
  KWB_SAME(math);
  KWB_SAME(disposition);
  KWB_SAME(reason);
  ASSERT_EQ(a.verify.has_value(), b.verify.has_value());
  if (a.verify) { SCOPED_TRACE("verify"); expect_same(*a.verify, *b.verify); }
  ASSERT_EQ(a.timing.has_value(), b.timing.has_value());
  if (a.timing) { SCOPED_TRACE("timing"); expect_same(*a.timing, *b.timing); }
  ASSERT_EQ(a.derived.has_value(), b.derived.has_value());
  if (a.derived) { SCOPED_TRACE("derived"); expect_same(*a.derived, *b.derived); }
  ASSERT_EQ(a.counters.has_value(), b.counters.has_value());
  if (a.counters) { SCOPED_TRACE("counters"); expect_same(*a.counters, *b.counters); }
  ASSERT_EQ(a.ncu_counters.has_value(), b.ncu_counters.has_value());
  if (a.ncu_counters) { SCOPED_TRACE("ncu_counters"); expect_same(*a.ncu_counters, *b.ncu_counters); }
  KWB_SAME(workspace_bytes);
  KWB_SAME(device_memory_bytes);
  KWB_SAME(nvtx_range);
  KWB_SAME(repro);
}

inline void expect_same(const DeviceInfo& a, const DeviceInfo& b) {
  KWB_SAME(index);
  KWB_SAME(name);
  KWB_SAME(uuid);
  KWB_SAME(sm_count);
  KWB_SAME(cc_major);
  KWB_SAME(cc_minor);
  KWB_SAME_D(sm_clock_mhz);
  KWB_SAME_D(mem_clock_mhz);
  KWB_SAME(mem_bus_width_bits);
  KWB_SAME(global_mem_bytes);
  KWB_SAME(l2_bytes);
  KWB_SAME(driver_version);
  KWB_SAME(runtime_version);
  KWB_SAME(cupti_version);
  KWB_SAME(chip);
  KWB_SAME(driver_release);
}

inline void expect_same(const Ceilings& a, const Ceilings& b) {
  KWB_SAME(source);
  KWB_SAME(measured_at);
  KWB_SAME_D(dram_copy_gbps);
  KWB_SAME_D(dram_read_gbps);
  KWB_SAME_D(fp32_tflops);
  KWB_SAME(tensor_tflops);  // exact double equality inside the map
  KWB_SAME(tensor_sm_mhz);
  KWB_SAME(dram_copy_method);
  KWB_SAME(dram_copy_by_method);
  KWB_SAME_D(l2_copy_gbps);
  KWB_SAME(l2_working_set_bytes);
}

inline void expect_same(const RunInfo& a, const RunInfo& b) {
  KWB_SAME(tool_version);
  KWB_SAME(git_sha);
  KWB_SAME(command_line);
  KWB_SAME(host);
  KWB_SAME(started_at);
  KWB_SAME(finished_at);
  KWB_SAME(complete);
  KWB_SAME(settings);
  ASSERT_EQ(a.device.has_value(), b.device.has_value());
  if (a.device) { SCOPED_TRACE("device"); expect_same(*a.device, *b.device); }
  ASSERT_EQ(a.ceilings.has_value(), b.ceilings.has_value());
  if (a.ceilings) { SCOPED_TRACE("ceilings"); expect_same(*a.ceilings, *b.ceilings); }
  ASSERT_EQ(a.datasheet_ceilings.has_value(), b.datasheet_ceilings.has_value());
  if (a.datasheet_ceilings) {
    SCOPED_TRACE("datasheet_ceilings");
    expect_same(*a.datasheet_ceilings, *b.datasheet_ceilings);
  }
  ASSERT_EQ(a.suite.has_value(), b.suite.has_value());
  if (a.suite) {
    SCOPED_TRACE("suite");
    EXPECT_EQ(a.suite->name, b.suite->name);
    EXPECT_EQ(a.suite->path, b.suite->path);
    EXPECT_EQ(a.suite->default_threshold, b.suite->default_threshold);  // exact: doubles round-trip
    EXPECT_EQ(a.suite->op_thresholds, b.suite->op_thresholds);
  }
}

inline void expect_same(const Report& a, const Report& b) {
  { SCOPED_TRACE("run"); expect_same(a.run, b.run); }
  ASSERT_EQ(a.cases.size(), b.cases.size());
  for (std::size_t i = 0; i < a.cases.size(); ++i) {
    SCOPED_TRACE("cases[" + std::to_string(i) + "]");
    expect_same(a.cases[i], b.cases[i]);
  }
}

#undef KWB_SAME
#undef KWB_SAME_D

}  // namespace kwb::test
