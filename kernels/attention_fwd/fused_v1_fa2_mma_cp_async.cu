// attention_fwd fused_v1_fa2_mma_m16n8k16_cp_async_swizzled: FlashAttention-2's forward in one
// kernel (flash_fwd_v1.cuh): scores never leave the SM. Each block owns BM query rows of one
// (batch, head); BM / 16 warps each own 16 rows, keep their Q fragments in registers, and stream
// K/V tiles of BN keys through a cp.async ring (`stages` deep) in XOR-swizzled shared memory
// (conflict-free ldmatrix), with an online softmax in registers (exp2 with log2 e folded into
// the scale), mma.sync m16n8k16 in bf16 / fp16 with fp32 accumulate for both GEMMs, causal and
// window tiles skipped outright (masked per element only on the tiles that straddle an edge),
// GQA by indexing the kv head, lse written in fp32. Any seq: tail tiles are zero-filled by
// cp.async and masked.
//
// Why it should be fast: the materialised baseline writes and reads b h s^2 scores twice (8 GiB
// at b4 h32 s4096 bf16); this reads Q, K, V once per block (K/V again per query tile, mostly
// from L2) and does only the visible half of a causal square.
//
// Napkin math (b4 h32 s4096 d128 causal bf16): FLOPs = 4 b h d s (s + 1) / 2 = 5.5e11; DRAM
// bytes ~0.54 GB (Q, K, V, O once) + 2 MB lse: 0.18 ms at 3000 GB/s, far under the compute time.
// mma.sync tops out near ~660 TFLOP/s dense bf16 on an H100 (wgmma's ~790 is sm_90a-only), and
// FA2 reaches ~320-350 TFLOP/s with it: 5.5e11 / 320e12 = 1.7 ms is the target, against ~5 ms for
// the baseline. Per K/V tile a warp does 2 * 16 * BN * D * 2 FLOPs on 2 * BN * D * 2 bytes of
// shared memory it reads by ldmatrix (32 FLOP/byte at BM = 128): ldmatrix bandwidth is not the
// limit; exp2 (BN * 16 per warp per tile) and the softmax's FMAs are the next, as in FA2.
//
// Tunables: q_tile (BM) 128 or 64 (8 or 4 warps), k_tile (BN) 64 or 128, stages 2 or 3. Shared
// memory (BM D + 2 stages BN D) * 2 bytes: 96 KiB at the default 128 x 64 x 2 with d = 128.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "harness/catalogue/cuda_check.hpp"
#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/flash_fwd_v1_launch.cuh"

namespace kwb {
namespace {

template <class T>
void launch(const LaunchArgs& a) {
  flash::launch_flash_fwd_v1<T>(a, AttentionParams::of(AttentionAxes::of(a.shape)));
}

std::optional<std::string> refuse(const Shape& s, DType) {
  const auto axes = AttentionAxes::of(s);
  if (axes.batch > 65535 || axes.heads > 65535) return "batch and heads must be at most 65535 (grid y and z)";
  return std::nullopt;
}

KWB_REGISTER_VARIANT(Variant{
    .op = "attention_fwd",
    .name = "fused_v1_fa2_mma_m16n8k16_cp_async_swizzled",
    .role = Role::fused,
    .description = "FlashAttention-2 forward: Q in registers, K/V tiles by cp.async into swizzled smem, "
                   "mma.sync m16n8k16 for both GEMMs, online softmax in registers, causal/window tiles skipped",
    .launch = by_dtype_of<DType::fp16, DType::bf16>([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = refuse,
    .tunables = flash::flash_fwd_v1_tunables(),
});

}  // namespace
}  // namespace kwb
