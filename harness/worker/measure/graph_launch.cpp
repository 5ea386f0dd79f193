// Capture, instantiate and replay one sample's launches (see graph_launch.hpp).
#include "harness/worker/measure/graph_launch.hpp"

#include <vector>

#include <fmt/format.h>

#include "harness/catalogue/cuda_check.hpp"

namespace kwb {
namespace {

std::string error_text(cudaError_t e) { return fmt::format("{}: {}", cudaGetErrorName(e), cudaGetErrorString(e)); }

// The errors a capture gives when the launch did something a graph cannot hold. The runtime's
// own words ("operation not permitted when stream is capturing") do not say what to look for.
std::string hint_for(cudaError_t e) {
  switch (e) {
    case cudaErrorStreamCaptureUnsupported:
    case cudaErrorStreamCaptureInvalidated:
    case cudaErrorStreamCaptureImplicit:
    case cudaErrorCapturedEvent:
    case cudaErrorStreamCaptureWrongThread:
      return " (the launch synchronizes, allocates, queries a stream or event, copies synchronously or uses the "
             "legacy default stream)";
    default:
      return "";
  }
}

// Kernel nodes of `graph`, those of its child graphs included.
std::size_t count_kernels(cudaGraph_t graph) {
  std::size_t n = 0;
  cuda_check(cudaGraphGetNodes(graph, nullptr, &n), "cudaGraphGetNodes");
  std::vector<cudaGraphNode_t> nodes(n);
  if (n) cuda_check(cudaGraphGetNodes(graph, nodes.data(), &n), "cudaGraphGetNodes");
  std::size_t kernels = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type;
    cuda_check(cudaGraphNodeGetType(node, &type), "cudaGraphNodeGetType");
    if (type == cudaGraphNodeTypeKernel) ++kernels;
    if (type == cudaGraphNodeTypeGraph) {
      cudaGraph_t child = nullptr;
      cuda_check(cudaGraphChildGraphNodeGetGraph(node, &child), "cudaGraphChildGraphNodeGetGraph");
      kernels += count_kernels(child);
    }
  }
  return kernels;
}

}  // namespace

GraphCaptureError::GraphCaptureError(const std::string& why)
    : std::runtime_error("cannot be captured in a CUDA graph: " + why + "; time it with --launch stream") {}

GraphLaunch::GraphLaunch(const LaunchFn& launch, cudaStream_t stream) {
  // An error left by earlier work must not be taken for the capture's.
  cuda_check(cudaGetLastError(), "before capturing the launch in a CUDA graph");
  cuda_check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");

  // 1. The launch, captured. Whatever it does, the capture is ended before anything else: a
  // stream left capturing would refuse the next case's work.
  std::string failure;
  try {
    launch(stream);
  } catch (const CudaError& e) {
    failure = e.what() + hint_for(e.code);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  const cudaError_t launch_error = cudaGetLastError();  // a launch the capture refused, unchecked
  const cudaError_t end_error = cudaStreamEndCapture(stream, &graph_);
  cudaGetLastError();  // the capture's errors are not sticky: clear them for the next case
  if (failure.empty() && launch_error != cudaSuccess)
    failure = "the launch: " + error_text(launch_error) + hint_for(launch_error);
  if (failure.empty() && end_error != cudaSuccess)
    failure = "cudaStreamEndCapture: " + error_text(end_error) + hint_for(end_error);
  if (failure.empty() && !graph_) failure = "cudaStreamEndCapture returned no graph";
  if (!failure.empty()) {
    if (graph_) cudaGraphDestroy(graph_);
    graph_ = nullptr;
    throw GraphCaptureError(failure);
  }

  // 2. Instantiated and uploaded once, outside every sample (the first replay would pay the
  // upload otherwise; the warm-up would absorb it, but it is not the variant's cost).
  try {
    kernels_ = static_cast<std::int64_t>(count_kernels(graph_));
    if (const cudaError_t e = cudaGraphInstantiate(&exec_, graph_, 0); e != cudaSuccess) {
      cudaGetLastError();
      throw GraphCaptureError("cudaGraphInstantiate: " + error_text(e));
    }
    cuda_check(cudaGraphUpload(exec_, stream), "cudaGraphUpload");
  } catch (...) {
    if (exec_) cudaGraphExecDestroy(exec_);
    cudaGraphDestroy(graph_);
    throw;
  }
}

GraphLaunch::~GraphLaunch() {
  if (exec_) cudaGraphExecDestroy(exec_);
  if (graph_) cudaGraphDestroy(graph_);
}

void GraphLaunch::replay(cudaStream_t stream) const { cuda_check(cudaGraphLaunch(exec_, stream), "cudaGraphLaunch"); }

}  // namespace kwb
