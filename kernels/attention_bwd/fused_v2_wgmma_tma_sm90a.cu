// attention_bwd fused_v2_wgmma_tma_atomic_dq: fused_v1's FlashAttention backward moved to Hopper's
// own machinery (flash_bwd_v2.cuh): the TMA brings K, V once and Q, dO per step into an mbarrier
// ring, a producer warp the step's lse and D, and two consumer warpgroups of 64 keys each run all
// five GEMMs as wgmma (S^T and dP^T from shared memory, dV and dK with P^T and dS^T straight from
// registers, dQ = dS K from a swizzled dS tile in shared memory), dQ added into an fp32
// accumulator by atomics. Around it, fused_v1's preprocess (D = rowsum(dO * O), the accumulator
// zeroed) and last pass (dq = scale * accumulator in T), flash_bwd_passes.cuh. dK and dV are each
// one block's sums in a fixed order (deterministic); dQ's adds land in any order.
//
// Why it should be faster than v1 (~190 TFLOP/s at b4 h32 s4096 d128 causal, 0.7x FA2): v1 is
// bound by its ldmatrix traffic (every warp reads all of Q and dO twice per step, ~11 FLOP per
// shared byte) and mma.sync; wgmma reads both operands of the S^T and dP^T GEMMs, and B of the
// other three, straight from shared memory for a whole warpgroup (64 rows at once), and a 128-key
// block halves dQ's atomics per FLOP against v1's 64.
//
// Napkin math (b4 h32 s4096 d128 causal bf16): 2.5 x the forward's 5.5e11 = 1.4e12 FLOPs. Per
// step a consumer issues 5 GEMMs of 64 x 64 x 128 multiply-adds (S^T and dP^T; dV and dK as 64 x
// 128 x 64; dQ as 64 x 64 x 128), 2 FLOPs each: 5 x 1.05 = 5.2 MFLOP, ~1300 clocks at the SM's
// ~4096 dense FLOP/clock, against its elementwise work (4096 exponentials and ~10 other operations
// per score: ~800 issue clocks for its 4 warps) that the other consumer's GEMMs should cover. At
// 60% of the ~790 TFLOP/s wgmma peak: ~470 TFLOP/s, 3.0 ms; FA2 (SDPA) measured 5.1 ms. dQ's
// atomics: one add per query row, d column and 128-key block, b h (s^2/2) d / 128 = 1.07e9 floats
// (5.4e8 float2 reductions), half of fused_v1's at 64-key blocks.
//
// Shared memory 162 KiB at d = 128 (98 KiB at d = 64), the alignment slack included; one block per
// SM.
#include <optional>
#include <string>

#include "kernels/attention_bwd/flash_bwd_v2_launch.cuh"
#include "kernels/attention_fwd/attention_params.cuh"

namespace kwb {
namespace {

std::optional<std::string> refuse(const Shape& s, DType) {
  const auto axes = AttentionAxes::of(s);
  return flash::refuse_flash_bwd(axes, axes.batch * axes.seq * axes.heads);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "attention_bwd",
    .name = "fused_v2_wgmma_tma_atomic_dq",
    .role = Role::fused,
    .description = "FlashAttention backward on Hopper (sm_90a): block per 128-key tile, a TMA producer warpgroup "
                   "feeds Q and dO through an mbarrier ring, two consumer warpgroups of 64 keys run S^T, dP^T, "
                   "dV, dK and dQ as wgmma (P^T and dS^T from registers, dS through swizzled shared memory), "
                   "dK/dV in registers over the group's heads, dQ by fp32 atomics",
    .launch = by_dtype_of<DType::fp16, DType::bf16>([]<class T>(const LaunchArgs& a) {
      flash::launch_flash_bwd_v2<T>(a, AttentionParams::of(AttentionAxes::of(a.shape)),
                                    flash::BwdWorkspace::of(AttentionAxes::of(a.shape)));
    }),
    .refuse = refuse,
    .workspace_bytes = [](const Shape& s, DType) { return flash::BwdWorkspace::of(AttentionAxes::of(s)).total; },
    .varies_run_to_run = true,
    .prepare = [](const LaunchArgs& a) {
      return flash::prepare_flash_bwd_v2(a, AttentionParams::of(AttentionAxes::of(a.shape)));
    },
});

}  // namespace
}  // namespace kwb
