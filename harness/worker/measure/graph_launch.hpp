// `--launch graph`: one sample's launches captured once in a CUDA graph, then replayed.
//
// measure() takes a LaunchFn and does not care what it issues: in graph mode it is given
// GraphLaunch::replay, so the variant's reset, the cold-mode L2 flush, the output check's poison
// and the timers' brackets (CUPTI's external id, the events' pair) stay exactly where they are in
// stream mode, outside the replayed graph. CUPTI joins a replay's kernels to its sample as it
// joins a stream launch's: a graph kernel's record carries the correlation id of the
// cudaGraphLaunch that ran it, and the sample's external id is pushed around that call.
//
// The capture runs in thread-local mode: an unsafe call of the worker's own thread during the
// capture (a synchronization, cudaMalloc, a stream or event query, a synchronous copy) is refused
// by the runtime and invalidates the capture, and the variant is skipped with that error, while
// the CUPTI thread stays free. What a replay leaves out that a stream launch did (host-side
// choices made per call are frozen at the capture) shows in the timed-output check, which runs on
// replays as on stream launches.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "harness/worker/measure/measure.hpp"

namespace kwb {

// The variant's launch cannot be captured: the case is skipped with what() as its reason
// ("cannot be captured in a CUDA graph: <what failed>; time it with --launch stream").
struct GraphCaptureError : std::runtime_error {
  explicit GraphCaptureError(const std::string& why);
};

class GraphLaunch {
 public:
  // Captures `launch` on `stream` once (it must issue every kernel of one sample there, or on
  // streams joined to it by events), instantiates and uploads the graph. Throws
  // GraphCaptureError; the stream is out of capture mode and the thread's last error cleared on
  // every path, so the worker goes on with the next case.
  GraphLaunch(const LaunchFn& launch, cudaStream_t stream);
  ~GraphLaunch();
  GraphLaunch(const GraphLaunch&) = delete;
  GraphLaunch& operator=(const GraphLaunch&) = delete;

  // One sample: a single cudaGraphLaunch on `stream`. Throws CudaError.
  void replay(cudaStream_t stream) const;

  // Kernel nodes in the graph, child graphs included: the kernels every replay runs at least.
  std::int64_t kernels() const { return kernels_; }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  std::int64_t kernels_ = 0;
};

}  // namespace kwb
