// How a variant launches flash_fwd_v2.cuh's kernel (sm_90a): the case's three TMA tensor maps,
// built once in prepare() outside timing, and the launch over its tunables (k_tile,
// tiles_in_flight). attention_fwd's fused_v2 runs it on dense sequences, attention_varlen_fwd's on
// packed ones (the params' cu_seqlens set) and block_sparse_attention_fwd's under a block mask (the
// params' block_mask set: a key-tile list after the barriers in shared memory).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/elem_type.hpp"
#include "harness/catalogue/registry.hpp"
#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/flash_fwd_v2.cuh"
#include "kernels/common/hopper/tma.cuh"

namespace kwb {
namespace flash {

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
// box lands as a (rows, 64) slab of 128-byte rows. Rows past the map's end (seq; total when the
// sequences are packed) are zero-filled.
inline CUtensorMap head_map(const void* base, ElemType type, const AttentionParams& p, std::int64_t heads,
                            std::uint32_t rows) {
  const std::uint64_t e = elem_size(type), d = static_cast<std::uint64_t>(p.head_dim);
  const std::uint64_t h = static_cast<std::uint64_t>(heads), s = static_cast<std::uint64_t>(p.seq);
  return hopper::make_tensor_map<4>(base, type, {d, h, s, static_cast<std::uint64_t>(p.batch)},
                                    {d * e, h * d * e, s * h * d * e}, {64, 1, rows, 1});
}

// prepare(): the maps of q, k and v for a case of these params. Packed sequences (p.cu_seqlens)
// are mapped as one batch of `total` rows; the kernel offsets each sequence's rows by its start.
inline std::shared_ptr<void> prepare_flash_fwd_v2(const LaunchArgs& a, const AttentionParams& params) {
  AttentionParams p = params;
  if (p.cu_seqlens) {
    p.seq = p.total;
    p.batch = 1;
  }
  const ElemType type = elem_type_of(a.dtype);
  auto st = std::make_shared<V2State>();
  st->q = a.tensor<const void>("q");
  st->k = a.tensor<const void>("k");
  st->v = a.tensor<const void>("v");
  st->k_tile = a.tunable("k_tile");
  st->q_map = head_map(st->q, type, p, p.heads, V2Layout<64, 64>::kBM);
  st->k_map = head_map(st->k, type, p, p.kv_heads, static_cast<std::uint32_t>(st->k_tile));
  st->v_map = head_map(st->v, type, p, p.kv_heads, static_cast<std::uint32_t>(st->k_tile));
  return st;
}

template <class T, int D, int BN, bool kOverlap>
void v2_launch_config(const LaunchArgs& a, const AttentionParams& p, const V2State& st) {
  using L = V2Layout<D, BN>;
  auto* kernel = &flash_fwd_v2<T, D, BN, kOverlap>;
  // Once per instantiation: the ring and barriers, and the longest key-tile list of a block mask.
  static const cudaError_t attribute = cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, L::kSmemBytes + 3 * kMaxListedTiles);
  cuda_check(attribute, "cudaFuncSetAttribute (flash_fwd_v2 shared memory)");
  int list_bytes = 0;
  if (p.block_mask) {
    if ((p.seq + BN - 1) / BN > kMaxListedTiles)
      throw std::invalid_argument("fused_v2: a block-masked sequence may span at most 1024 key tiles");
    if (p.block % L::kBM != 0 || p.block % BN != 0)
      throw std::invalid_argument("fused_v2: its 128-row query tile and k_tile must divide the mask's block");
    list_bytes = tile_list_bytes<BN>(p.seq);
  }
  const dim3 grid(static_cast<unsigned>((p.seq + L::kBM - 1) / L::kBM), static_cast<unsigned>(p.heads),
                  static_cast<unsigned>(p.batch));
  kernel<<<grid, L::kThreads, L::kSmemBytes + list_bytes, a.stream>>>(st.q_map, st.k_map, st.v_map, a.tensor<T>("o"),
                                                         a.tensor<float>("lse"), p);
}

template <class T, bool kOverlap>
void v2_launch_head_dim(const LaunchArgs& a, const AttentionParams& p, const V2State& st) {
  const bool wide = p.head_dim == 128;
  if (st.k_tile == 128)
    return wide ? v2_launch_config<T, 128, 128, kOverlap>(a, p, st) : v2_launch_config<T, 64, 128, kOverlap>(a, p, st);
  if (st.k_tile == 64)
    return wide ? v2_launch_config<T, 128, 64, kOverlap>(a, p, st) : v2_launch_config<T, 64, 64, kOverlap>(a, p, st);
  throw std::invalid_argument("fused_v2: k_tile must be 128 or 64");
}

template <class T>
void v2_launch_tiles(const LaunchArgs& a, const AttentionParams& p, const V2State& st, std::int64_t in_flight) {
  if (in_flight == 1) return v2_launch_head_dim<T, false>(a, p, st);
  if (in_flight == 2) return v2_launch_head_dim<T, true>(a, p, st);
  throw std::invalid_argument("fused_v2: tiles_in_flight must be 1 or 2");
}

template <class T>
void launch_flash_fwd_v2(const LaunchArgs& a, const AttentionParams& p) {
  const V2State& st = a.state_as<V2State>();
  if (st.q != a.tensor<const void>("q") || st.k != a.tensor<const void>("k") || st.v != a.tensor<const void>("v"))
    throw std::logic_error("fused_v2: tensors moved since prepare()");
  v2_launch_tiles<T>(a, p, st, a.tunable("tiles_in_flight"));
}

// The tunables both variants declare.
inline std::vector<Tunable> flash_fwd_v2_tunables() {
  return {{"k_tile", {128, 64}, "keys per K/V tile (the N of S's wgmma, the K of P V's)"},
          {"tiles_in_flight", {2, 1}, "key tiles a consumer has on the tensor cores: 2 = the next tile's S "
                                      "and softmax under this tile's P V, the consumers' GEMMs in turns "
                                      "(FA3's intra-warpgroup overlap and ping-pong); 1 = in order"}};
}

}  // namespace flash
}  // namespace kwb
