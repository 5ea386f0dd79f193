// mhc_rmsnorm_project_fwd fused_v1_fma_warp_per_token: r and Z in one pass over H on CUDA cores,
// one warp per token (kernels/mhc_rmsnorm_project_fwd/project_fma.cuh), any dtype and any C.
//
// What it fixes against the baseline: H is read once (not cast, squared, normalised and
// re-read by a GEMM through fp32 [T, K] intermediates): 1 launch instead of 6-8.
// Why it is NOT at the copy roof: each token streams all of W (K x P: 256 KB at C = 1024 bf16)
// through L1/L2 for 8 KB of H, and needs 32 FMAs per element: at 65536 x 1024 that is 16 GB of
// L2 traffic and 8.6 GFMA: expect ~1-2 ms (L1/L2-bound, ~10-20% of the copy roof), near the
// baseline's ~3 ms (8.5 GB of DRAM traffic), not far below it; in fp32 (32 FMAs per element on
// 16-byte W rows) slower than the baseline. Measured: docs/results.md. It is the correct, simple
// kernel; fused_v3 is the tensor-core kernel meant for the roof.
// Registers: 32 accumulators + 32 weights + addressing, ~90; 8 warps per block.
#include "harness/catalogue/typed_launch.cuh"
#include "kernels/mhc_rmsnorm_project_fwd/project_fma.cuh"

namespace kwb {
namespace {

template <class T>
void launch(const LaunchArgs& a) {
  const auto axes = MhcAxes::of(a.shape);
  launch_project_fma(a.tensor<const T>("H"), a.tensor<const T>("W"), a.tensor<float>("Z"), a.tensor<float>("r"),
                     axes.tokens, axes.flat_len(), static_cast<int>(a.tunable("warps_per_block")), a.stream);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mhc_rmsnorm_project_fwd",
    .name = "fused_v1_fma_warp_per_token",
    .role = Role::fused,
    .description = "one pass over H on CUDA cores, one warp per token, W rows from L1/L2 (simple, not fast)",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = {},
    .math = "fp32",
    .tunables = {{"warps_per_block", {8, 4, 16}, "warps (tokens in flight) per block of 32 x this threads"}},
});

}  // namespace
}  // namespace kwb
