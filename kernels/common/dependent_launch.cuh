// Programmatic dependent launch (Hopper): a second kernel that reads what the first wrote may
// launch, and its blocks become resident, while the first still runs (on SMs the first leaves
// free); it waits in griddepcontrol.wait until the first has completed and its writes are visible.
// That hides the second launch's latency and the gap between the two behind the first one's tail.
// The second grid launches once every block of the first has allowed it (or ended). Correctness
// never depends on where the first kernel allows it, provided the second reads nothing the first
// writes and writes no global memory before its wait: the wait is for the first's completion.
#pragma once

#include <cuda_runtime.h>  // cudaLaunchKernelEx's template form

#include <utility>

namespace kwb {

// Called by the first kernel (any thread, any time): its dependent grid may launch now. A first
// kernel that never calls it makes the launch behave like a plain stream-ordered one.
__device__ __forceinline__ void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// Called by the dependent kernel before it reads the first kernel's writes.
__device__ __forceinline__ void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// kernel<<<grid, block, 0, stream>>>(args...), programmatically dependent on the previous kernel
// in the stream. Returns the launch's error (as cudaLaunchKernelEx does).
template <class... Params, class... Args>
cudaError_t launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.stream = stream;
  cudaLaunchAttribute dependent{};
  dependent.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  dependent.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &dependent;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace kwb
