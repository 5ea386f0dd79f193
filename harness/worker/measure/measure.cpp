// Warm-up, sample batches, the CUPTI join and the event fallback (see measure.hpp).
#include "harness/worker/measure/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <stdexcept>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/worker/measure/clocks.hpp"
#include "harness/worker/measure/cupti_tracer.hpp"
#include "harness/worker/measure/intervals.hpp"

namespace kwb {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::uint64_t next_external_id() {
  static std::uint64_t id = 0;  // the worker measures on one thread
  return ++id;
}

// Per-sample accumulation shared by both timers.
struct SampleSink {
  std::vector<double> span_us, busy_us, sum_us;
  std::vector<double> kernel_counts;
  std::vector<double> launch_overhead_us;  // host time of the launch call per kernel (CUPTI only)
  std::map<std::string, std::vector<double>> per_kernel_us;     // name -> per-sample sum
  std::map<std::string, std::int64_t> per_kernel_launches;       // name -> launches in sample 0

  void add(const SampleTimes& t) {
    span_us.push_back(t.span_ns / 1e3);
    busy_us.push_back(t.busy_ns / 1e3);
    sum_us.push_back(t.sum_ns / 1e3);
    kernel_counts.push_back(static_cast<double>(t.kernel_count));
  }
};

void add_cupti_sample(SampleSink& sink, const std::vector<KernelActivity>& kernels, double host_launch_ns) {
  std::vector<KernelInterval> intervals;
  std::map<std::string, std::pair<std::int64_t, double>> by_name;
  for (const auto& k : kernels) {
    intervals.push_back(k.interval);
    auto& [count, ns] = by_name[k.name];
    ++count;
    ns += static_cast<double>(k.interval.end_ns - k.interval.start_ns);
  }
  const bool first = sink.span_us.empty();
  sink.add(sample_times(intervals));
  sink.launch_overhead_us.push_back(host_launch_ns / 1e3 / static_cast<double>(kernels.size()));
  for (const auto& [name, count_ns] : by_name) {
    sink.per_kernel_us[name].push_back(count_ns.second / 1e3);
    if (first) sink.per_kernel_launches[name] = count_ns.first;
  }
}

// The host's wall time of one launch call: what issuing the sample cost the calling thread (under
// CUPTI, its API tracing included). The launch's errors are checked after the sample, untimed.
double timed_launch_ns(const LaunchFn& launch, cudaStream_t stream) {
  const auto t0 = Clock::now();
  launch(stream);
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
}

}  // namespace

std::string_view to_string(TimerKind kind) {
  return kind == TimerKind::cupti ? "cupti" : "cuda_events";
}

TimingResult measure(const LaunchFn& launch, cudaStream_t stream, const MeasureSettings& settings,
                     TimerKind timer, L2Flusher* flusher) {
  const bool cold = settings.mode == Mode::cold;
  if (cold && !flusher) throw std::logic_error("cold mode needs an L2 flusher");
  const StoppingRule& rule = settings.rule;
  auto& tracer = CuptiTracer::instance();
  auto run_once = [&](const char* step) {
    if (settings.reset) settings.reset(stream);
    if (cold) flusher->flush(stream);
    launch(stream);
    cuda_check_launch(step);
  };

  // 1. Warm-up, so clocks are up and lazy module loading is done before sample one: rounds of
  // launches queued as the samples are, until two rounds agree and the clock is up (warmup_done).
  // A round is about a quarter of the warm-up's floor, so rounds compare like with like.
  const ClockProbe& clocks = ClockProbe::current();
  const auto warm0 = Clock::now();
  std::vector<double> round_ms_per_launch;
  std::int64_t calls = 0, round = 1;
  for (;;) {
    const auto round0 = Clock::now();
    for (std::int64_t i = 0; i < round; ++i) run_once("launch (warm-up)");
    cuda_check(cudaStreamSynchronize(stream), "synchronize after warm-up launches");
    calls += round;
    round_ms_per_launch.push_back(ms_since(round0) / static_cast<double>(round));
    const auto reading = clocks.read();
    const bool clock_up = !reading || !reading_throttled(*reading, clocks.max_sm_mhz());
    if (warmup_done(rule, round_ms_per_launch, calls, ms_since(warm0), clock_up)) break;
    // A quarter of the floor, and never past the warm-up's length (a fixed warm-up stays fixed).
    const double per_launch = std::max(round_ms_per_launch.back(), 1e-3);
    const double left_ms = std::max(rule.warmup_ms - ms_since(warm0), 0.0);
    round = std::clamp<std::int64_t>(
        std::llround(std::min(rule.warmup_min_ms / 4, left_ms) / per_launch), 1, 4096);
  }
  const double warmup_ms = ms_since(warm0);
  // A kernel too long for min_samples within the time limit gets fewer (min_samples_for).
  StoppingRule rule_for_kernel = rule;
  rule_for_kernel.min_samples = min_samples_for(rule, round_ms_per_launch.back());
  if (timer == TimerKind::cupti) {  // forget the warm-up kernels
    tracer.flush();
    tracer.take_samples();
    tracer.take_dropped();
  }

  // 2. Samples in batches; records are joined after each batch, outside the timed work.
  SampleSink sink;
  std::vector<BatchClocks> batch_clocks;  // SM clock read while each batch runs and after it
  // The events live until measure() returns or throws (a failed launch, a wrong timed output).
  struct Events {
    std::vector<cudaEvent_t> list;
    ~Events() {
      for (auto e : list) cudaEventDestroy(e);
    }
  } owned_events;
  std::vector<cudaEvent_t>& events = owned_events.list;
  const auto measure0 = Clock::now();
  std::optional<StopReason> stop;
  std::size_t batches = 0;
  while (!stop) {
    const std::size_t batch = next_batch(rule_for_kernel, sink.span_us.size(), ms_since(measure0));
    std::vector<std::uint64_t> ids(batch);
    std::vector<double> host_launch_ns(batch);  // wall time of each sample's launch call
    if (timer == TimerKind::events) {
      while (events.size() < 2 * batch) {
        cudaEvent_t e;
        cuda_check(cudaEventCreate(&e), "cudaEventCreate");
        events.push_back(e);
      }
    }
    const std::size_t checked = settings.output_check ? batch - 1 : batch;  // none: no sample
    for (std::size_t i = 0; i < batch; ++i) {
      if (i == checked) settings.output_check->poison(stream);
      if (settings.reset) settings.reset(stream);
      if (cold) flusher->flush(stream);
      if (timer == TimerKind::cupti) {
        ids[i] = next_external_id();
        tracer.push_sample(ids[i]);
        host_launch_ns[i] = timed_launch_ns(launch, stream);
        tracer.pop_sample();
      } else {
        cuda_check(cudaEventRecord(events[2 * i], stream), "cudaEventRecord");
        host_launch_ns[i] = timed_launch_ns(launch, stream);
        cuda_check(cudaEventRecord(events[2 * i + 1], stream), "cudaEventRecord");
      }
      cuda_check_launch("launch (measure)");
    }
    BatchClocks& batch_clock = batch_clocks.emplace_back();
    batch_clock.samples = static_cast<std::int64_t>(batch);
    if (auto r = clocks.read()) batch_clock.readings.push_back(*r);  // the GPU runs the batch
    cuda_check(cudaStreamSynchronize(stream), "synchronize after measured samples");
    if (auto r = clocks.read()) batch_clock.readings.push_back(*r);
    ++batches;
    if (settings.output_check)
      if (auto wrong = settings.output_check->check()) {
        throw TimedOutputMismatch(fmt::format("timed launches did not reproduce the verified output: sample {} (the "
                                              "last of batch {}, run on poisoned outputs): {}",
                                              sink.span_us.size() + batch, batches, *wrong));
      }
    // Hot mode keeps L2 warm from sample to sample; the check just read the outputs (and their
    // copy) and the poison rewrote them, so one untimed launch warms L2 again before the next
    // batch's first sample. (Its kernels carry no sample id: the CUPTI join ignores them.)
    if (settings.output_check && !cold) {
      if (settings.reset) settings.reset(stream);
      launch(stream);
      cuda_check_launch("launch (re-warm after the output check)");
    }

    if (timer == TimerKind::cupti) {
      tracer.flush();
      auto by_sample = tracer.take_samples();
      if (auto dropped = tracer.take_dropped())
        throw std::runtime_error("CUPTI dropped " + std::to_string(dropped) +
                                 " activity records; the samples are incomplete");
      for (std::size_t i = 0; i < batch; ++i) {
        auto it = by_sample.find(ids[i]);
        const std::size_t kernels = it == by_sample.end() ? 0 : it->second.size();
        if (kernels == 0)
          throw std::runtime_error(settings.launch == LaunchKind::graph
                                       ? "a graph replay recorded no kernel: the captured launch holds no GPU work"
                                       : "a sample recorded no kernel: the variant launched no GPU work");
        if (static_cast<std::int64_t>(kernels) < settings.graph_kernels)
          throw std::runtime_error(fmt::format("CUPTI recorded {} kernels of a graph replay that runs {}: the samples "
                                               "are incomplete; time this case with --timer events",
                                               kernels, settings.graph_kernels));
        add_cupti_sample(sink, it->second, host_launch_ns[i]);
      }
    } else {
      for (std::size_t i = 0; i < batch; ++i) {
        float ms = 0;
        cuda_check(cudaEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]),
                   "cudaEventElapsedTime");
        const double ns = ms * 1e6;
        sink.add({-1, ns, ns, ns});
      }
    }
    stop = should_stop(rule_for_kernel, sink.span_us, ms_since(measure0));
  }

  TimingResult result;
  result.timer = std::string(to_string(timer));
  result.mode = settings.mode;
  result.launch = settings.launch;
  result.flush = cold ? std::string(to_string(flusher->kind())) : "none";
  result.preset = rule.preset;
  result.span = summarize(sink.span_us);
  result.busy = summarize(sink.busy_us);
  result.kernel_sum = summarize(sink.sum_us);
  result.kernels_per_sample =
      timer == TimerKind::cupti ? static_cast<std::int64_t>(summarize(sink.kernel_counts).median) : -1;
  for (const auto& [name, per_sample] : sink.per_kernel_us)
    result.kernels.push_back({name, sink.per_kernel_launches[name], summarize(per_sample).median});
  result.stop_reason = *stop;
  result.warmup_ms = warmup_ms;
  result.measure_wall_ms = ms_since(measure0);
  if (settings.keep_samples) result.samples_us = sink.span_us;
  if (!sink.launch_overhead_us.empty()) result.launch_overhead_us = summarize(sink.launch_overhead_us).median;
  result.clocks = summarize_clocks(batch_clocks, clocks.max_sm_mhz());
  return result;
}

}  // namespace kwb
