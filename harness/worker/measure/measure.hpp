// The timing loop: warm-up by time, then batches of samples until the stopping rule is met.
//
// With CUPTI each sample is tagged by an external correlation id and its times come from the
// kernels' own GPU timestamps (sum, busy, span). With CUDA events (the fallback when CUPTI
// cannot attach, e.g. under Nsight Compute) each sample is the interval between two events on
// the stream, which also holds launch latency: the record names the timer so nobody mixes them.
//
// Around each sample's launch call the host's wall clock is read too: that time per kernel is the
// record's launch overhead (TimingResult::launch_overhead_us). In graph mode the launch given is
// a graph replay (harness/worker/measure/graph_launch.hpp) and nothing else here changes.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "harness/worker/measure/l2_flush.hpp"
#include "harness/record/record.hpp"
#include "harness/record/stats.hpp"

namespace kwb {

enum class TimerKind { cupti, events };
std::string_view to_string(TimerKind kind);

using LaunchFn = std::function<void(cudaStream_t)>;

struct MeasureSettings {
  Mode mode = Mode::cold;
  // What `launch` issues, for the record: the variant's launches, or a replay of their graph.
  LaunchKind launch = LaunchKind::stream;
  // Graph mode: the kernel nodes of the replayed graph. A CUPTI sample that shows fewer kernels
  // lost records (CUPTI reports each kernel node of a replay), and measure() refuses it.
  std::int64_t graph_kernels = 0;
  StoppingRule rule;
  bool keep_samples = true;
  // Optional: called before every launch (warm-up included), outside the measured interval:
  // before the L2 flush (so a cold sample stays cold), before the sample's CUPTI correlation id
  // is pushed or its start event is recorded.
  LaunchFn reset;
  // Optional: the timed launches' output is checked. The last sample of every batch runs on
  // poisoned outputs (`poison`, before its reset and flush, outside the measured interval and
  // outside CUPTI's sample and the events' interval); once the batch has ended, `check` says
  // what that sample's output got wrong (nullopt: it reproduced the verified output), and
  // measure() throws TimedOutputMismatch with it. So the last timed sample is always checked, and
  // nothing the launch is given (arguments, state, stream) tells a checked sample from another.
  struct OutputCheck {
    LaunchFn poison;
    std::function<std::optional<std::string>()> check;
  };
  std::optional<OutputCheck> output_check;
};

// A checked sample whose output differs from the verified one: the case fails with what().
struct TimedOutputMismatch : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws CudaError if a launch or synchronization fails, TimedOutputMismatch if a checked sample's
// output is wrong, std::runtime_error if a sample launched no kernel or CUPTI dropped records.
TimingResult measure(const LaunchFn& launch, cudaStream_t stream, const MeasureSettings& settings,
                     TimerKind timer, L2Flusher* flusher);

}  // namespace kwb
