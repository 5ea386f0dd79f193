// A case's counter passes and their record (see case_counters.hpp).
#include "harness/worker/counters/case_counters.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <memory>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/plan/counter_sets.hpp"
#include "harness/worker/counters/occupancy.hpp"
#include "harness/worker/counters/range_profiler.hpp"
#include "harness/worker/measure/cupti_tracer.hpp"

namespace kwb {
namespace {

SmLimits current_sm_limits() {
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp p{};
  cuda_check(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
  return sm_limits(p);
}

// A configuration per metric list, built once per worker: the host API's work is the same for
// every case of a run.
const MetricConfig& config_for(const CounterAccess& access, const std::vector<std::string>& metrics) {
  static std::map<std::vector<std::string>, std::unique_ptr<MetricConfig>> configs;
  auto& slot = configs[metrics];
  if (!slot) slot = std::make_unique<MetricConfig>(access.chip, metrics, access.availability);
  return *slot;
}

std::uint64_t counter_pass_id() {
  static std::uint64_t id = 0;  // far above measure()'s sample ids
  return (1ull << 62) + ++id;
}

std::string how_taken(const CounterPass& pass, int passes) {
  std::string start = pass.mode == Mode::cold
                          ? fmt::format("the L2 flushed ({})", pass.flusher ? std::string(to_string(pass.flusher->kind()))
                                                                             : std::string("none"))
                          : std::string("one warm-up launch (hot)");
  return fmt::format("{} replay pass{} of the launch (a range per kernel), each after the variant's reset and {}; "
                     "one more launch before them names the kernels",
                     passes, passes == 1 ? "" : "es", start);
}

// The kernels one launch runs, in start order, from the activity records of a tagged launch.
std::vector<KernelActivity> launched_kernels(const ReplayPass& pass, cudaStream_t stream) {
  auto& tracer = CuptiTracer::instance();
  const std::uint64_t id = counter_pass_id();
  if (pass.before) pass.before(stream);
  tracer.push_sample(id);
  pass.launch(stream);
  tracer.pop_sample();
  cuda_check_launch("launch (naming the counted kernels)");
  cuda_check(cudaStreamSynchronize(stream), "synchronize after naming the counted kernels");
  tracer.flush();
  auto by_sample = tracer.take_samples();
  std::vector<KernelActivity> kernels = std::move(by_sample[id]);
  std::sort(kernels.begin(), kernels.end(),
            [](const KernelActivity& a, const KernelActivity& b) { return a.interval.start_ns < b.interval.start_ns; });
  return kernels;
}

}  // namespace

CaseCounters collect_counters(const CounterPass& pass, cudaStream_t stream) {
  CaseCounters out;
  out.source = "cupti";
  out.sets = pass.sets;
  out.metrics = pass.metrics;
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  const CounterAccess& access = counter_access(device);
  out.chip = access.chip;
  if (!access.unavailable.empty()) {
    out.unavailable = access.unavailable;
    return out;
  }
  auto& tracer = CuptiTracer::instance();
  const bool named = pass.timer == TimerKind::cupti && tracer.active();
  ReplayPass replay;
  replay.before = [&](cudaStream_t s) {
    if (pass.reset) pass.reset(s);
    if (pass.mode == Mode::cold) {
      if (pass.flusher) pass.flusher->flush(s);
    } else {  // hot: the samples start from the previous launch's L2 contents
      pass.launch(s);
      if (pass.reset) pass.reset(s);
    }
  };
  replay.launch = pass.launch;
  // Kernel names and launch shapes come from one tagged launch before the profiler starts: its
  // activity records, in start order, are the kernels in launch order, which is the order of the
  // ranges (CUPTI's activity records do not come while the range profiler is enabled).
  std::vector<KernelActivity> kernels;
  if (named) kernels = launched_kernels(replay, stream);
  const MetricsByRange split = split_by_range(pass.metrics);
  RangeResult result, whole;
  std::string whole_failed;  // the whole-launch passes' refusal: the per-kernel values stand
  try {
    if (!split.per_kernel.empty()) result = profile_ranges(config_for(access, split.per_kernel), replay, stream);
  } catch (const CounterError& e) {
    out.unavailable = e.what();
    return out;
  }
  try {
    if (!split.whole_launch.empty())
      whole = profile_ranges(config_for(access, split.whole_launch), replay, stream, RangeKind::whole_launch);
  } catch (const CounterError& e) {
    whole_failed = e.what();
  }
  out.passes = result.passes + whole.passes;
  out.note = how_taken(pass, out.passes);
  if (!whole_failed.empty())
    out.note += fmt::format("; {} not read: {}", fmt::join(split.whole_launch, ", "), whole_failed);

  const bool joined = kernels.size() == result.ranges.size();
  static const SmLimits sm = current_sm_limits();
  for (std::size_t i = 0; i < result.ranges.size(); ++i) {
    KernelCounters k;
    k.name = joined ? kernels[i].name : "kernel " + result.ranges[i].range;
    for (std::size_t m = 0; m < split.per_kernel.size() && m < result.ranges[i].values.size(); ++m)
      k.values[split.per_kernel[m]] = result.ranges[i].values[m];
    if (joined) {
      KernelLaunch launch = kernels[i].launch;
      fill_occupancy(launch, sm);
      k.launch = launch;
    }
    out.kernels.push_back(std::move(k));
  }
  if (!joined)
    out.note += named ? fmt::format("; kernel names unknown ({} kernels in the tagged launch, {} ranges)",
                                    kernels.size(), result.ranges.size())
                      : std::string("; kernel names unknown (CUDA-event timer: no activity records)");
  out.total = total_over_kernels(out.kernels);
  if (!whole.ranges.empty()) {
    for (std::size_t m = 0; m < split.whole_launch.size() && m < whole.ranges[0].values.size(); ++m)
      out.total[split.whole_launch[m]] = whole.ranges[0].values[m];
    out.note += fmt::format("; {} over the whole launch only (CUPTI counts SASS-instruction metrics in a range "
                            "of their own, not per kernel)",
                            fmt::join(split.whole_launch, ", "));
  }
  return out;
}

}  // namespace kwb
