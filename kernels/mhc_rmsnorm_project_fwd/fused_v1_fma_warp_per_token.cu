// mhc_rmsnorm_project_fwd fused_v1_fma_warp_per_token: r and Z in one pass over H on CUDA cores,
// one warp per token (kernels/mhc_rmsnorm_project_fwd/project_fma.cuh), any dtype and any C.
//
// What it fixes against the baseline: H is read once (not cast, squared, normalised and
// re-read by a GEMM through fp32 [T, K] intermediates): 1 launch instead of 6-8.
// Why it is NOT at the copy roof: each token streams all of W (K x P: 256 KB at C = 1024 bf16)
// through L1/L2 for 8 KB of H, and needs 32 FMAs per element: at 65536 x 1024 that is 16 GB of
// L2 traffic and 8.6 GFMA: expect ~1-2 ms (L1/L2-bound, ~10-20% of the copy roof), near the
// baseline's ~3 ms (8.5 GB of DRAM traffic), not far below it. Measured on an H100: 2.18 ms in
// bf16 (1.8x the baseline), 8.4 ms in fp32 (0.38x: 32 FMAs per element on 16-byte W rows). It
// is the correct, simple kernel; fused_v3 is the tensor-core kernel meant for the roof.
// Registers: 32 accumulators + 32 weights + addressing, ~90; 8 warps per block.
#include "harness/catalogue/registry.hpp"
#include "kernels/mhc_rmsnorm_project_fwd/project_fma.cuh"

namespace kwb {
namespace {

template <class T>
void launch_typed(const LaunchArgs& a) {
  launch_project_fma(static_cast<const T*>(a.tensors[0]), static_cast<const T*>(a.tensors[1]),
                     static_cast<float*>(a.tensors[2]), static_cast<float*>(a.tensors[3]), a.shape.at("tokens"),
                     kMhcStreams * a.shape.at("channels"), static_cast<int>(a.tunable("warps_per_block")), a.stream);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mhc_rmsnorm_project_fwd",
    .name = "fused_v1_fma_warp_per_token",
    .role = Role::fused,
    .description = "one pass over H on CUDA cores, one warp per token, W rows from L1/L2 (simple, not fast)",
    .launch = [](const LaunchArgs& a) { dispatch_dtype(a.dtype, [&](auto tag) { launch_typed<decltype(tag)>(a); }); },
    .refuse = {},
    .tunables = {{"warps_per_block", {8, 4, 16}, "warps (tokens in flight) per block of 32 x this threads"}},
});

}  // namespace
}  // namespace kwb
