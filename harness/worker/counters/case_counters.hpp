// A case's hardware counters: after its timing pass, the variant's launch is replayed under the
// range profiler (harness/worker/counters/range_profiler.hpp) once per pass the metrics need,
// each pass starting as the timed samples do (the variant's reset, then the L2 flush when cold,
// or one warm-up launch when hot), and the values are joined with the kernels' names and launch
// shapes from the activity records of the first pass.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "harness/record/counters.hpp"
#include "harness/record/record.hpp"
#include "harness/worker/measure/l2_flush.hpp"
#include "harness/worker/measure/measure.hpp"

namespace kwb {

struct CounterPass {
  std::vector<std::string> sets;     // as asked (for the record)
  std::vector<std::string> metrics;  // full names
  Mode mode = Mode::cold;
  L2Flusher* flusher = nullptr;      // cold mode
  TimerKind timer = TimerKind::cupti;
  LaunchFn reset;                    // may be empty
  LaunchFn launch;
};

// Never throws for the counters' own trouble (no permission, CUPTI refusing a call): the result
// then says why in `unavailable`, and the case keeps its timing. A CUDA error in a replayed
// launch is the variant's and propagates as CudaError.
CaseCounters collect_counters(const CounterPass& pass, cudaStream_t stream);

}  // namespace kwb
