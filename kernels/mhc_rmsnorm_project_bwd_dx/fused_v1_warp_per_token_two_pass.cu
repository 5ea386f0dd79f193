// mhc_rmsnorm_project_bwd_dx fused_v1_warp_per_token_two_pass: dH in one launch, one warp per
// token, two passes over the token's K = n * C values; any dtype, any C.
//
//   pass 1: lane walks k = lane, lane + 32, ...: g_k = dZ[t] . W[k, :] (dZ's 32 values held in
//           every lane's registers, W's row read as 16-byte vectors), s += H[t, k] g_k; the warp
//           sums s (shuffles), coef = r^3 s / K;
//   pass 2: the same walk recomputes g_k and writes dH[t, k] = r g_k - coef H[t, k].
// s needs all of H[t] before any dH[t] can be written, so H[t] is read twice: the second read
// (8 KB per token at C = 1024 bf16, one warp's recent loads) should hit L2. g is recomputed
// rather than kept (K floats per token do not fit a warp's registers at C = 4096).
//
// Napkin math (bf16, 65536 x 1024): DRAM H 512 MB + dH 512 MB + dZ 8 MB: ~340 us at 3000 GB/s;
// but each token reads W (256 KB) twice through L1/L2 and does 2 x 32 FMAs per element, so this
// kernel is L1/L2- and FMA-bound: expect ~2-4 ms, a few times better than the baseline's ~12 GB
// chain at best. Correctness and clarity first (no performance target for this op); a
// tensor-core version would tile tokens as the forward's fused_v2 does.
// Registers: 32 dZ + 32 W + addressing, ~90.
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/mhc_rmsnorm_project_bwd_dx/bwd_fma.cuh"

namespace kwb {
namespace {

template <class T>
void launch(const LaunchArgs& a) {
  const auto axes = MhcAxes::of(a.shape);
  launch_bwd_dx_fma(a.tensor<const T>("H"), a.tensor<const T>("W"), a.tensor<const float>("r"),
                    a.tensor<const float>("dZ"), a.tensor<T>("dH"), axes.tokens, axes.flat_len(),
                    static_cast<int>(a.tunable("warps_per_block")), a.stream);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mhc_rmsnorm_project_bwd_dx",
    .name = "fused_v1_warp_per_token_two_pass",
    .role = Role::fused,
    .description = "one warp per token: pass 1 s = H.(dZ @ W^T), pass 2 dH = r g - (r^3 / K) s H with g "
                   "recomputed; W rows from L1/L2 (correct and simple, not fast)",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = {},
    .tunables = {{"warps_per_block", {8, 4, 16}, "warps (tokens in flight) per block of 32 x this threads"}},
});

}  // namespace
}  // namespace kwb
