// A case's counter passes and their record (see case_counters.hpp).
#include "harness/worker/counters/case_counters.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <memory>

#include "harness/catalogue/cuda_check.hpp"
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
  return fmt::format("{} replay pass{} of the launch (a range per kernel), each after the variant's reset and {}",
                     passes, passes == 1 ? "" : "es", start);
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
  const std::uint64_t id = counter_pass_id();
  bool first = true;
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
  replay.launch = [&](cudaStream_t s) {
    if (named && first) tracer.push_sample(id);
    pass.launch(s);
    if (named && first) tracer.pop_sample();
    first = false;
  };
  RangeResult result;
  try {
    const MetricConfig& config = config_for(access, pass.metrics);
    result = profile_ranges(config, replay, stream);
  } catch (const CounterError& e) {
    out.unavailable = e.what();
    return out;
  }
  out.passes = result.passes;
  out.note = how_taken(pass, result.passes);

  // Kernel names and launch shapes: the first pass's activity records, in start order, are the
  // ranges in launch order (the profiler serialises the kernels).
  std::vector<KernelActivity> kernels;
  if (named) {
    cuda_check(cudaDeviceSynchronize(), "synchronize before reading activity records");
    tracer.flush();
    auto by_sample = tracer.take_samples();
    kernels = std::move(by_sample[id]);
    std::sort(kernels.begin(), kernels.end(),
              [](const KernelActivity& a, const KernelActivity& b) { return a.interval.start_ns < b.interval.start_ns; });
  }
  const bool joined = kernels.size() == result.ranges.size();
  static const SmLimits sm = current_sm_limits();
  for (std::size_t i = 0; i < result.ranges.size(); ++i) {
    KernelCounters k;
    k.name = joined ? kernels[i].name : "kernel " + result.ranges[i].range;
    for (std::size_t m = 0; m < pass.metrics.size() && m < result.ranges[i].values.size(); ++m)
      k.values[pass.metrics[m]] = result.ranges[i].values[m];
    if (joined) {
      KernelLaunch launch = kernels[i].launch;
      fill_occupancy(launch, sm);
      k.launch = launch;
    }
    out.kernels.push_back(std::move(k));
  }
  if (!joined && named)
    out.note += fmt::format("; kernel names unknown ({} activity records for {} ranges)", kernels.size(),
                            result.ranges.size());
  out.total = total_over_kernels(out.kernels);
  return out;
}

}  // namespace kwb
