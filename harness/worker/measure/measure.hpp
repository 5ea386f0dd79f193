// The timing loop: warm-up by time, then batches of samples until the stopping rule is met.
//
// With CUPTI each sample is tagged by an external correlation id and its times come from the
// kernels' own GPU timestamps (sum, busy, span). With CUDA events (the fallback when CUPTI
// cannot attach, e.g. under Nsight Compute) each sample is the interval between two events on
// the stream, which also holds launch latency: the record names the timer so nobody mixes them.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>

#include "harness/worker/measure/l2_flush.hpp"
#include "harness/record/record.hpp"
#include "harness/record/stats.hpp"

namespace kwb {

enum class TimerKind { cupti, events };
std::string_view to_string(TimerKind kind);

using LaunchFn = std::function<void(cudaStream_t)>;

struct MeasureSettings {
  Mode mode = Mode::cold;
  StoppingRule rule;
  bool keep_samples = true;
  // Optional: called before every launch (warm-up included), outside the measured interval:
  // before the L2 flush (so a cold sample stays cold), before the sample's CUPTI correlation id
  // is pushed or its start event is recorded.
  LaunchFn reset;
};

// Throws CudaError if a launch or synchronization fails, std::runtime_error if a sample
// launched no kernel or CUPTI dropped records.
TimingResult measure(const LaunchFn& launch, cudaStream_t stream, const MeasureSettings& settings,
                     TimerKind timer, L2Flusher* flusher);

}  // namespace kwb
