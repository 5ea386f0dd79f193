// The result of one case and the environment it was measured in: what the reports carry.
//
// Every time is in microseconds (suffix _us), every rate says its unit (_gbps, _tflops).
// Optional parts are absent, not zero, when they were not measured: a skipped case has no
// timing, a case measured with CUDA events has no per-kernel breakdown.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/record/fail_on.hpp"
#include "harness/record/counters.hpp"
#include "harness/record/stats.hpp"
#include "harness/catalogue/elem_type.hpp"
#include "harness/catalogue/launch_kind.hpp"
#include "harness/catalogue/plugin_source.hpp"
#include "harness/catalogue/types.hpp"

namespace kwb {

// One element that broke the tolerance, for the "first mismatches" list of a failed case.
struct Mismatch {
  std::string tensor;
  std::int64_t index = 0;
  double got = 0;
  double expected = 0;
};

// What was checked of one output tensor, and what was found.
struct OutputCheck {
  std::string name;
  ElemType elem = ElemType::fp32;  // concrete
  double atol = 0, rtol = 0;       // the tolerance this output was checked with
  // Its error-bound terms (Tolerance): each element's bound adds these times the magnitudes of
  // the terms the oracle summed for it. Both 0: a flat tolerance.
  double abs_sum_scale = 0, root_sum_sq_scale = 0;
  // The worst element's |got - ref| as a fraction of its own bound (atol + rtol*|ref| + the
  // error-bound terms): under 1 passes; how close the output came to failing.
  double worst_bound_fraction = 0;
  std::int64_t elements_checked = 0;  // compared with the oracle
  std::int64_t elements_total = 0;    // in the whole tensor
  bool sampled = false;               // elements_checked covers a sample of the sample axis
  bool device_scanned = false;        // the counts below cover the whole tensor (device scan)
  std::int64_t nonfinite = 0;   // NaN/Inf elements found (poison excluded)
  std::int64_t unwritten = 0;   // elements still holding the poison pattern
  std::int64_t mismatches = 0;  // outside atol + rtol*|ref| among the checked elements
  // NaN/Inf where the reference is finite or the reverse, in the checked elements, plus the
  // non-finite elements the device scan found outside them (the oracle is taken as finite there)
  std::int64_t nonfinite_mismatches = 0;
  double max_abs_err = 0, max_rel_err = 0;
  bool passed = false;
};

struct VerifyResult {
  bool passed = false;
  double atol = 0, rtol = 0;  // the first output's (the flat CSV columns); per output below
  std::int64_t elements_checked = 0;
  std::int64_t mismatches = 0;          // |got - ref| > atol + rtol*|ref|
  std::int64_t nonfinite_mismatches = 0;  // NaN/Inf where the reference is finite, or the reverse
  std::int64_t unwritten = 0;           // still holding the poison pattern
  bool all_zero = false;                // every checked output element is exactly 0
  double max_abs_err = 0, max_rel_err = 0, rel_l2_err = 0;
  std::int64_t rows_checked = 0, rows_total = 0;  // rows_checked < rows_total: sampled
  std::vector<Mismatch> first_mismatches;
  // How the case was verified, in words: "full", "sampled 512 of 16384 along rows", or "full:
  // output 'colsum' is not aligned with the sample axis 'rows'".
  std::string sampling;
  // The first index of each sampled block along the sample axis (drawn from the case's seed, the
  // first and last blocks always in), and the block length; empty when nothing was sampled.
  std::vector<std::int64_t> sampled_block_starts;
  std::int64_t sampled_block_length = 0;
  // The worst |got - ref| / bound over every output (OutputCheck::worst_bound_fraction).
  double worst_bound_fraction = 0;
  std::vector<OutputCheck> outputs;  // one per output tensor, in the op's order
  // Where the oracle's answer came from: "computed" (this run) or "cache" (the oracle cache on
  // disk, written by an earlier run); shared by the cases of a group. Empty in older reports.
  std::string oracle_source;
};

// Median time of one kernel inside a sample (a baseline launches several).
struct KernelBreakdown {
  std::string name;
  std::int64_t launches_per_sample = 0;
  double median_us = 0;  // median over samples of this kernel's summed duration per sample
};

// SM clock over a case's samples, read through NVML around each batch (harness/worker/measure/clocks.hpp).
struct ClockSummary {
  double sm_min_mhz = 0, sm_max_mhz = 0;  // over every reading
  double sm_rated_max_mhz = 0;            // the highest SM clock the GPU may run at; 0 unknown
  std::int64_t readings = 0;
  std::int64_t samples = 0;
  std::int64_t throttled_samples = 0;     // in a batch read under 90% of rated max or throttled
  std::vector<std::string> throttle_reasons;  // NVML reasons seen ("sw_power_cap", ...)
  // The SM clock the samples ran at: each batch's readings averaged, weighted by its samples.
  // 0 in reports written before it was recorded.
  double sm_mean_mhz = 0;
};

struct TimingResult {
  std::string timer;  // "cupti" or "cuda_events"
  Mode mode = Mode::cold;
  std::string flush = "dirty";  // L2 state before each sample: "dirty", "clean", "none" (hot)
  // How each sample was launched: the variant's launch on the stream, or a replay of a CUDA graph
  // captured from it (harness/catalogue/launch_kind.hpp). Older reports: stream.
  LaunchKind launch = LaunchKind::stream;
  std::string preset;
  SummaryStats span;        // first kernel start to last kernel end: the headline time
  SummaryStats busy;        // union of kernel intervals
  SummaryStats kernel_sum;  // sum of kernel durations
  std::int64_t kernels_per_sample = -1;  // -1: the timer cannot count kernels (events)
  std::vector<KernelBreakdown> kernels;
  StopReason stop_reason = StopReason::converged;
  double warmup_ms = 0;
  double measure_wall_ms = 0;
  std::vector<double> samples_us;  // span of each sample, in order
  // Host wall time of one sample's launch call (the variant's launch; cudaGraphLaunch in graph
  // mode) divided by the kernels the sample ran: the median over the samples, in microseconds.
  // What issuing a kernel costs the host, beside what it costs the device. Absent where the timer
  // cannot count kernels (CUDA events) and in older reports.
  std::optional<double> launch_overhead_us;
  std::optional<ClockSummary> clocks;  // absent when NVML is unavailable
  // How the timed launches' output was checked against the verified one ("bit-identical to the
  // verified output: ..."), in words; empty in reports written before it was checked.
  std::string output_check;
};

// What the counters say the case moved and computed, against the op's work model.
struct MeasuredWork {
  double dram_bytes = 0;      // DRAM bytes read + written over the sample's kernels
  double traffic_ratio = 0;   // dram_bytes / the model's bytes (1: moves what it must)
  // FLOPs the hardware executed: tensor-pipe operations plus FP32/FP64/FP16 instructions (an FMA
  // counts 2); absent where no FLOP counter was collected.
  std::optional<double> flops;
  std::optional<double> flop_ratio;   // flops / the model's FLOPs
  std::optional<double> intensity;    // flops / dram_bytes
  // What stands out, in words: "moves 37% more DRAM traffic than the work model (ratio 1.37)".
  std::vector<std::string> flags;
};

struct Derived {
  double model_bytes = 0;  // the op's useful work: what GB/s, TFLOP/s and speedups count
  double model_flops = 0;
  // The work the variant executes: the model's, unless the variant declares less
  // (Variant::executed_work: a symmetric product computed once). Every "% of" figure below
  // counts it, since it is what the hardware did. Older reports: the model's.
  double executed_bytes = 0;
  double executed_flops = 0;
  double bandwidth_gbps = 0;    // model bytes / median span
  double tflops = 0;            // model flops / median span
  double intensity = 0;         // flops per byte
  std::string bound;            // "memory" or "compute": which roof is lower at the executed intensity
  double roofline_tflops = 0;   // attainable rate at the executed intensity
  double pct_of_roofline = 0;   // executed FLOP rate against roofline_tflops
  // The compute roof of the op's unit (FP32 or the tensor cores in the case's dtype) and the
  // executed FLOP rate against it; 0 when the ceilings have no figure for the unit.
  double compute_roof_tflops = 0;
  double pct_of_compute_roof = 0;
  // The DRAM roof for this case's mix of reads and writes (harness/derive/ceilings.hpp dram_roof_gbps):
  // the copy ceiling for equal reads and writes, rising toward the read-only ceiling as reads
  // dominate. 0 in reports written before it was recorded (their roof was the copy ceiling).
  double bandwidth_roof_gbps = 0;
  double write_fraction = 0;            // of the model's bytes, those written (the outputs)
  double pct_of_bandwidth_ceiling = 0;  // executed bytes' rate against bandwidth_roof_gbps
  // A cold case whose tensors fit in the L2 (its writes may still sit there when it ends): judged
  // against the L2 copy ceiling, as hot cases are, not the DRAM roof.
  bool l2_resident = false;
  // Hot and L2-resident cases, when the L2 copy ceiling was measured: the roof for data that
  // stays in L2 (executed bytes' rate against it).
  std::optional<double> pct_of_l2_ceiling;
  std::optional<double> speedup_vs_baseline;  // baseline median / this median
  std::string baseline_variant;
  // The baseline's math label: where it differs from the case's own, the speedup sets one
  // arithmetic against another ("tf32 vs fp32", math_comparison). Empty: unknown (older reports).
  std::string baseline_math;
  // The measured roofline: the same point from hardware counters, when the case collected them
  // (harness/derive/measured_roofline.hpp). Absent without counters.
  std::optional<MeasuredWork> measured;
};

// Where a case's time went in the worker, in milliseconds of host wall time per stage of its run
// (harness/worker/case_runner.cpp): what `kwb run --time-report` sums over a run. A group's
// inputs and oracle are charged to its first case, which prepares them for the others.
struct CaseStageTimes {
  double setup_ms = 0;      // device state reset, fresh stream, memory check, flusher
  double inputs_ms = 0;     // inputs drawn on the device, sampled slabs copied to the host
  double oracle_ms = 0;     // the fp64 oracle (or its cached answer)
  double prepare_ms = 0;    // the variant's prepare()
  double verify_ms = 0;     // the launch on poisoned outputs, the scan and the comparison
  double measure_ms = 0;    // warm-up, timed samples and the timed output's check
  double counters_ms = 0;   // counter replay passes
  double isolation_ms = 0;  // device state read before the variant and checked after it
  // Round trip seen by the session (request sent to record received and completed) beyond the
  // stages above: the protocol, the record's encoding and derivation. Filled by the session.
  double overhead_ms = 0;
  // Host time the group's inputs decoding and oracle took on the worker's background thread while
  // the previous group was timed (harness/worker/prepare/group_prefetch.hpp): work done beside the
  // case's wall time, not part of it (total_ms leaves it out).
  double oracle_background_ms = 0;
  double total_ms() const {
    return setup_ms + inputs_ms + oracle_ms + prepare_ms + verify_ms + measure_ms + counters_ms + isolation_ms +
           overhead_ms;
  }
};

struct CaseRecord {
  int index = 0;
  std::string op;
  std::string variant;
  Role role = Role::fused;
  DType dtype = DType::fp32;
  Shape shape;
  // The shape as tables show it ("b4 s4096 h32/8 d128 causal": harness/catalogue/shape_label.hpp),
  // from the op's axis labels; never parsed back. Empty: not known; shown_shape() falls back.
  std::string shape_label;
  TunableValues tunables;  // the variant's tunable values (part of the identity); often none
  // What ran it: the libraries the variant called (Variant::uses, "cuBLASLt"; empty: only the
  // project's kernels) and the arithmetic, as a label of harness/catalogue/math_label.hpp
  // ("tf32", "bf16, fp32 acc"). math is empty for a skipped case and in older reports.
  std::vector<std::string> uses;
  std::string math;
  Disposition disposition = Disposition::not_verified;
  std::string reason;  // why skipped or failed; empty otherwise
  std::optional<VerifyResult> verify;
  std::optional<TimingResult> timing;
  std::optional<Derived> derived;
  // Hardware counters (kwb run --counters/--metrics), and those imported from Nsight Compute
  // (kwb profile --run); absent where not collected.
  std::optional<CaseCounters> counters;
  std::optional<CaseCounters> ncu_counters;
  // Device memory the variant needs beyond its inputs and outputs (its workspace: an unfused
  // baseline's intermediates, a fused kernel's partial sums), in bytes.
  std::int64_t workspace_bytes = 0;
  // Device memory the case took beyond its inputs and outputs, measured: free memory before the
  // workspace and the variant's prepare() minus free memory after the verification launch. It
  // holds the workspace, what prepare() allocated (plans, packed weights), library handles and
  // lazily loaded kernel code, in the driver's 2 MiB pages. Absent where not measured.
  std::optional<std::int64_t> device_memory_bytes;
  std::string nvtx_range;  // the case identity: "op:variant:dtype:shape[:tunables]"
  std::string repro;       // a command line that measures exactly this case
  // The GPU (CUDA index) that measured it, in a run spread over several (`kwb run --devices`);
  // absent when the whole run used one.
  std::optional<int> device;
  // Host time per stage (absent in older reports and for a case the worker never answered).
  std::optional<CaseStageTimes> stages;
  // The plugin that registered the case's variant, else its op (`kwb run --plugin`): its path and
  // SHA-256, so that the result names the build of the code it measured. Absent for the catalogue
  // built into kwb, and in reports written before plugins existed.
  std::optional<PluginSource> plugin;
};

// The shape as tables show it: the recorded label, else the compact form.
inline std::string shown_shape(const CaseRecord& c) {
  return c.shape_label.empty() ? c.shape.to_compact() : c.shape_label;
}

// The device memory a case needs beyond its inputs and outputs: measured where it was, else the
// workspace the variant declares.
inline std::int64_t extra_memory_bytes(const CaseRecord& c) { return c.device_memory_bytes.value_or(c.workspace_bytes); }

// Ceilings used to derive efficiencies.
struct Ceilings {
  std::string source;  // "measured" or "datasheet"
  std::string measured_at;  // ISO date of the measurement, empty for datasheet
  // Read + write bytes per second: the best device-to-device copy over every method, size and
  // flush tried (cudaMemcpyAsync, copy kernels at several launch shapes; dirty and clean L2), so
  // that no cold case, under either flush, can honestly read above it.
  double dram_copy_gbps = 0;
  std::string dram_copy_method;  // which one gave dram_copy_gbps ("memcpy_async 2GiB clean", ...)
  std::map<std::string, double> dram_copy_by_method;  // every method's figure, GB/s
  // Bytes read per second by a read-only stream: the best of several read kernels (launch shapes,
  // loads in flight, 8- and 16-byte vectors) at each size and flush, as the copy ceiling is.
  double dram_read_gbps = 0;
  std::string dram_read_method;  // which one gave dram_read_gbps; empty in older reports
  std::map<std::string, double> dram_read_by_method;  // every read kernel's figure, GB/s
  // Bytes written per second by a write-only stream, the best of several store kernels and the
  // driver's memset, as above: a write-heavy case (a gradient spread over a sequence) can move
  // more than a copy does. 0: not measured (datasheet ceilings, caches before it was).
  double dram_write_gbps = 0;
  std::string dram_write_method;
  std::map<std::string, double> dram_write_by_method;
  // Read + write bytes per second of a copy whose working set (source + destination) is a
  // quarter of the L2, hot: the roof of a hot case whose data stays in L2. 0 when not measured.
  double l2_copy_gbps = 0;
  std::int64_t l2_working_set_bytes = 0;
  double fp32_tflops = 0;     // FFMA on CUDA cores
  std::map<std::string, double> tensor_tflops;  // by dtype name: "bf16", "fp16", "tf32"
  // The mean SM clock (MHz) of the measurement that set each tensor rate: a GEMM's rate follows
  // the clock. Absent without NVML and in ceilings measured before it was kept.
  std::map<std::string, double> tensor_sm_mhz;
};

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string uuid;
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  double sm_clock_mhz = 0, mem_clock_mhz = 0;
  int mem_bus_width_bits = 0;
  std::int64_t global_mem_bytes = 0;
  std::int64_t l2_bytes = 0;
  int driver_version = 0;   // cudaDriverGetVersion, e.g. 13000
  int runtime_version = 0;  // cudaRuntimeGetVersion
  std::uint32_t cupti_version = 0;
  std::string chip;  // CUPTI's name for the GPU's chip ("GH100"), which names its counters; empty: unknown
  std::string driver_release;  // "580.159.04" when NVML or /proc says it
};

// The suite a run was planned from (`kwb run --suite FILE`), for compare and the reports.
struct SuiteInfo {
  std::string name;
  std::string path;  // as given on the command line
  // The smallest slowdown compare treats as a regression, as a fraction (0.03 for 3%): the
  // suite's default and its per-op overrides. Written as one object {"default": .., "<op>": ..}.
  double default_threshold = 0.05;
  std::map<std::string, double> op_thresholds;
  // The threshold that applies to `op`.
  double threshold_for(const std::string& op) const {
    auto it = op_thresholds.find(op);
    return it != op_thresholds.end() ? it->second : default_threshold;
  }
  // What a compare against this run fails on besides slower and failed cases (the suite's
  // `compare: {fail_on: [...]}`); empty: nothing else. Written as {"compare": {"fail_on": [..]}}.
  std::vector<FailOnClass> compare_fail_on;
};

// The slice of a plan a sharded run measured (`kwb run --shard I/N`, harness/plan/shard.hpp).
struct ShardInfo {
  int index = 0;  // from 0
  int count = 1;
  std::int64_t plan_cases = 0;  // cases in the whole plan, every shard together
  std::string plan_digest;      // FNV-1a 64 of the plan's case identities in order, hex
};

// One shard report that `kwb merge` joined.
struct MergedShard {
  int index = 0;
  std::string file;  // as given to kwb merge
  std::string host;
  std::string device_name, device_uuid;  // empty when the shard report has no device
  std::string started_at, finished_at;
  std::int64_t cases = 0;
};

// How a merged report was put together (`kwb merge`).
struct MergeInfo {
  int shard_count = 1;
  std::int64_t plan_cases = 0;
  std::string plan_digest;
  std::vector<int> missing_shards;  // shards that hold cases but were not given
  bool ceilings_differ = false;     // the shards' ceilings differ; the first shard's are used
  std::vector<MergedShard> shards;  // in shard order
};

// Everything a report holds besides the records.
struct RunInfo {
  std::string tool_version;
  std::string git_sha;
  std::string command_line;
  std::string host;
  std::string started_at, finished_at;  // ISO 8601 UTC
  bool complete = false;                // false when the run was interrupted
  std::map<std::string, std::string> settings;  // mode, preset, seed, filters...
  std::optional<DeviceInfo> device;
  // Every GPU of a run spread over several (`kwb run --devices`), in the order given; `device` is
  // the first (its ceilings are the run's: the GPUs are of one kind). Empty for a one-GPU run.
  std::vector<DeviceInfo> devices;
  std::optional<Ceilings> ceilings;           // the ones used for derived metrics
  std::optional<Ceilings> datasheet_ceilings;  // always shown beside measured ones
  std::optional<SuiteInfo> suite;              // absent for a run planned from flags alone
  std::optional<ShardInfo> shard;              // absent for a run of the whole plan
  std::optional<MergeInfo> merged;             // present in a report made by `kwb merge`
  // The session's own stages, in seconds of wall time: "start workers", "ceilings", "cases",
  // "reports" (the last written before the reports themselves: it is the previous writes'), in
  // the order they ran. Absent in older reports.
  std::vector<std::pair<std::string, double>> session_stages_s;
};

}  // namespace kwb
