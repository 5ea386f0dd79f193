// attention_fwd fused_v2_wgmma_tma_warp_specialized: fused_v1's FlashAttention forward moved to
// Hopper's own machinery (flash_fwd_v2.cuh), FlashAttention-3's design: a producer warpgroup
// streams Q, K, V by bulk tensor copies (TMA, 128-byte swizzle, tail rows zero-filled by the copy
// engine) through an mbarrier ring of 2-4 stages (K and V freed separately), and two consumer
// warpgroups of 64 query rows each run both GEMMs as wgmma (S = Q K^T from shared memory, O += P V
// with P from registers) with the online softmax in registers between them (flash_softmax.cuh,
// shared with fused_v1). With tiles_in_flight = 2 each consumer issues the next tile's S before
// this tile's P V and runs the next softmax under it, and the two consumers take turns issuing
// (ping-pong), so that one's exponentials overlap the other's MMAs. Causal / window tiles are
// skipped outright and masked per element only where they straddle an edge; GQA by indexing the
// kv head in the TMA coordinates.
//
// Why it should be faster than v1 (206 TFLOP/s): mma.sync tops out near ~660 TFLOP/s dense and
// needs every warp to load its B fragments by ldmatrix; wgmma (~790 TFLOP/s) reads both operands
// of S and V straight from shared memory, 64 x BN per instruction, and the TMA frees the math
// warps from address arithmetic and cp.async bookkeeping. The exponentials are the next wall: one
// per score against 4 d = 512 MMA FLOPs at d = 128, while MUFU does 16 per clock per SM against
// ~4096 dense bf16 FLOPs: unhidden, they cost a third of the MMA time (hence the ping-pong).
//
// Napkin math (b4 h32 s4096 d128 causal bf16): FLOPs = 4 b h d s (s + 1) / 2 = 5.5e11; DRAM
// ~0.54 GB (Q, K, V, O once; K/V re-reads per query tile mostly hit L2): 0.18 ms at 3000 GB/s,
// far under the compute time. At FlashAttention-2's ~320 TFLOP/s: 1.7 ms; FA3 reaches ~600
// (cuDNN ~540): 0.9-1.0 ms. Per K/V tile a consumer does 2 x 2 x 64 x BN x D FLOPs on BN x D x 2
// x 2 bytes of shared memory (64 FLOP/byte at BM = 128): shared-memory bandwidth is not the limit.
//
// Tunables: k_tile (BN) 64 or 128 keys per tile; tiles_in_flight 2 or 1 (1: S, softmax, P V in
// order, no turns). Shared memory 128 D x 2 bytes of Q + stages x 2 x BN D x 2 bytes of K and V:
// 160 KiB at d = 128 for both k_tile values (4 stages of 64 keys, 2 of 128). One block per SM.
#include <cstdint>
#include <optional>
#include <string>

#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/flash_fwd_v2_launch.cuh"

namespace kwb {
namespace {

template <class T>
void launch(const LaunchArgs& a) {
  flash::launch_flash_fwd_v2<T>(a, AttentionParams::of(AttentionAxes::of(a.shape)));
}

std::optional<std::string> refuse(const Shape& s, DType) {
  const auto axes = AttentionAxes::of(s);
  if (axes.batch > 65535 || axes.heads > 65535) return "batch and heads must be at most 65535 (grid y and z)";
  // TMA coordinates are 32-bit signed; the head strides must be multiples of 16 bytes (they are:
  // d is 64 or 128).
  if (axes.seq > (std::int64_t{1} << 31) - 256) return "seq must fit a 32-bit TMA coordinate";
  return std::nullopt;
}

KWB_REGISTER_VARIANT(Variant{
    .op = "attention_fwd",
    .name = "fused_v2_wgmma_tma_warp_specialized",
    .role = Role::fused,
    .description = "FlashAttention-3-style forward (sm_90a): a TMA producer warpgroup feeds an mbarrier ring, "
                   "two consumer warpgroups of 64 rows run S = Q K^T and O += P V as wgmma, softmax in registers, "
                   "the next tile's S under this tile's P V, the consumers' GEMMs in turns (ping-pong)",
    .launch = by_dtype_of<DType::fp16, DType::bf16>([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = refuse,
    .tunables = flash::flash_fwd_v2_tunables(),
    .prepare = [](const LaunchArgs& a) {
      return flash::prepare_flash_fwd_v2(a, AttentionParams::of(AttentionAxes::of(a.shape)));
    },
});

}  // namespace
}  // namespace kwb
