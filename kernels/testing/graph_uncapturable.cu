// Test-only variants that are correct as stream launches but cannot be captured in a CUDA graph,
// as real code often cannot:
//   test_graph_host_wait:          waits on the host for its own kernel (cudaStreamSynchronize,
//                                  its error unchecked, as code that reads a result back does);
//   test_graph_allocates_per_launch: cudaMalloc and cudaFree a scratch buffer around its kernel,
//                                  each checked (the launch throws when the runtime refuses).
// `kwb run --launch graph` must skip each with the reason ("cannot be captured in a CUDA graph:
// ...; time it with --launch stream") and go on with the next case; `--launch stream` times them.
// Hidden from `list` and default sweeps (`--include-test-variants`).
#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/typed_launch.cuh"
#include "kernels/testing/simple_rmsnorm.cuh"

namespace kwb {
namespace {

KWB_REGISTER_VARIANT(Variant{
    .op = "rmsnorm_fwd",
    .name = "test_graph_host_wait",
    .role = Role::fused,
    .description = "TEST ONLY: a correct RMSNorm that waits on the host for its kernel (not capturable)",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) {
      testing::launch_simple_rmsnorm<T>(a);
      (void)cudaStreamSynchronize(a.stream);  // refused inside a capture; fine on a stream
    }),
    .refuse = testing::refuse_beyond_grid,
    .test_only = true,
});

KWB_REGISTER_VARIANT(Variant{
    .op = "rmsnorm_fwd",
    .name = "test_graph_allocates_per_launch",
    .role = Role::fused,
    .description = "TEST ONLY: a correct RMSNorm that allocates and frees a scratch buffer each launch",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) {
      void* scratch = nullptr;
      cuda_check(cudaMalloc(&scratch, 256), "cudaMalloc (scratch of one launch)");
      testing::launch_simple_rmsnorm<T>(a);
      cuda_check(cudaFree(scratch), "cudaFree (scratch of one launch)");
    }),
    .refuse = testing::refuse_beyond_grid,
    .test_only = true,
});

}  // namespace
}  // namespace kwb
