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
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/elem_type.hpp"
#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/flash_fwd_v2.cuh"
#include "kernels/common/hopper/tma.cuh"

namespace kwb {
namespace {

// The three tensor maps of a case (built in prepare(), outside timing) and what they were built
// for (the harness keeps a case's tensors where prepare() saw them; launch() checks).
struct V2State {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  std::int64_t k_tile = 0;
  CUtensorMap q_map{}, k_map{}, v_map{};
};

// Q [b, s, h, d] and K, V [b, s, kv_h, d] as 4-D tensors {d, head, row, batch} (innermost first):
// one box is 64 values of d (128 bytes, the swizzle's width) of one head for `rows` rows, so a
// box lands as a (rows, 64) slab of 128-byte rows. Rows past seq are zero-filled.
CUtensorMap head_map(const void* base, ElemType type, const AttentionParams& p, std::int64_t heads,
                     std::uint32_t rows) {
  const std::uint64_t e = elem_size(type), d = static_cast<std::uint64_t>(p.head_dim);
  const std::uint64_t h = static_cast<std::uint64_t>(heads), s = static_cast<std::uint64_t>(p.seq);
  return hopper::make_tensor_map<4>(base, type, {d, h, s, static_cast<std::uint64_t>(p.batch)},
                                    {d * e, h * d * e, s * h * d * e}, {64, 1, rows, 1});
}

std::shared_ptr<void> prepare(const LaunchArgs& a) {
  const AttentionParams p = AttentionParams::of(AttentionAxes::of(a.shape));
  const ElemType type = elem_type_of(a.dtype);
  auto st = std::make_shared<V2State>();
  st->q = a.tensor<const void>("q");
  st->k = a.tensor<const void>("k");
  st->v = a.tensor<const void>("v");
  st->k_tile = a.tunable("k_tile");
  st->q_map = head_map(st->q, type, p, p.heads, flash::V2Layout<64, 64>::kBM);
  st->k_map = head_map(st->k, type, p, p.kv_heads, static_cast<std::uint32_t>(st->k_tile));
  st->v_map = head_map(st->v, type, p, p.kv_heads, static_cast<std::uint32_t>(st->k_tile));
  return st;
}

template <class T, int D, int BN, bool kOverlap>
void launch_config(const LaunchArgs& a, const AttentionParams& p, const V2State& st) {
  using L = flash::V2Layout<D, BN>;
  auto* kernel = &flash::flash_fwd_v2<T, D, BN, kOverlap>;
  static const cudaError_t attribute =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, L::kSmemBytes);
  cuda_check(attribute, "cudaFuncSetAttribute (flash_fwd_v2 shared memory)");
  const dim3 grid(static_cast<unsigned>((p.seq + L::kBM - 1) / L::kBM), static_cast<unsigned>(p.heads),
                  static_cast<unsigned>(p.batch));
  kernel<<<grid, L::kThreads, L::kSmemBytes, a.stream>>>(st.q_map, st.k_map, st.v_map, a.tensor<T>("o"),
                                                         a.tensor<float>("lse"), p);
}

template <class T, bool kOverlap>
void launch_head_dim(const LaunchArgs& a, const AttentionParams& p, const V2State& st) {
  const bool wide = p.head_dim == 128;
  if (st.k_tile == 128)
    return wide ? launch_config<T, 128, 128, kOverlap>(a, p, st) : launch_config<T, 64, 128, kOverlap>(a, p, st);
  if (st.k_tile == 64)
    return wide ? launch_config<T, 128, 64, kOverlap>(a, p, st) : launch_config<T, 64, 64, kOverlap>(a, p, st);
  throw std::invalid_argument("fused_v2: k_tile must be 128 or 64");
}

template <class T>
void launch_tiles(const LaunchArgs& a, const AttentionParams& p, const V2State& st, std::int64_t in_flight) {
  if (in_flight == 1) return launch_head_dim<T, false>(a, p, st);
  if (in_flight == 2) return launch_head_dim<T, true>(a, p, st);
  throw std::invalid_argument("fused_v2: tiles_in_flight must be 1 or 2");
}

template <class T>
void launch(const LaunchArgs& a) {
  const V2State& st = a.state_as<V2State>();
  if (st.q != a.tensor<const void>("q") || st.k != a.tensor<const void>("k") || st.v != a.tensor<const void>("v"))
    throw std::logic_error("fused_v2: tensors moved since prepare()");
  launch_tiles<T>(a, AttentionParams::of(AttentionAxes::of(a.shape)), st, a.tunable("tiles_in_flight"));
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
    .tunables = {{"k_tile", {64, 128}, "keys per K/V tile (the N of S's wgmma, the K of P V's)"},
                 {"tiles_in_flight", {2, 1}, "key tiles a consumer has on the tensor cores: 2 = the next tile's S "
                                             "and softmax under this tile's P V, the consumers' GEMMs in turns "
                                             "(FA3's intra-warpgroup overlap and ping-pong); 1 = in order"}},
    .prepare = prepare,
});

}  // namespace
}  // namespace kwb
