// block_sparse_attention_fwd's contract, shared by its oracle, its kernels, its tests and its peer
// script: attention_fwd (reference/attention.hpp: bshd Q, K, V and O, lse [b, h, s], causal,
// soft-cap, grouped-query heads) where query i sees key j only if the block mask keeps
// (i / block, j / block) for its (batch, head), as FlexAttention's BlockMask and block-sparse
// FlashAttention take it.
//
// The mask, block_mask [batch, heads, q_blocks, k_blocks] (bool; q_blocks = k_blocks =
// ceil(seq / block)), is a formula of the shape, derived on the device, so that the work model counts
// exactly the pairs a case computes:
//   kept(b, h, qb, kb) = visible block (kb <= qb under causal) and
//                        hi32(splitmix64(((b * heads + h) * q_blocks + qb) * k_blocks + kb)) * 100
//                          < density * 2^32
// i.e. each visible block kept with probability density / 100, independently across blocks, heads
// and sequences (a hash, not a draw: the same on host, device and in Python). A row block can keep
// nothing: its rows see no key, and their output is 0 and their lse -inf (FlexAttention's
// convention; an eager softmax over only -inf would give NaN).
#pragma once

#include <cstdint>
#include <string>

#include "harness/catalogue/types.hpp"
#include "reference/attention.hpp"
#include "reference/ragged_lengths.hpp"  // KWB_RAGGED_HD: host and device

namespace kwb {
namespace block_sparse {

inline constexpr const char* kOp = "block_sparse_attention_fwd";

KWB_RAGGED_HD inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Whether block (qb, kb) of (batch b, head h) is kept: `blocks` = ceil(seq / block) each way.
KWB_RAGGED_HD inline bool block_kept(std::int64_t b, std::int64_t h, std::int64_t qb, std::int64_t kb,
                                     std::int64_t heads, std::int64_t blocks, std::int64_t density, bool causal) {
  if (causal && kb > qb) return false;
  const std::uint64_t index = static_cast<std::uint64_t>(((b * heads + h) * blocks + qb) * blocks + kb);
  return (splitmix64(index) >> 32) * 100 < static_cast<std::uint64_t>(density) << 32;
}

struct BlockSparseAxes {
  AttentionAxes attention;  // window 0: the block mask is the op's sparsity
  std::int64_t block = 128;
  std::int64_t density = 50;  // percent of the visible blocks kept

  static BlockSparseAxes of(const Shape& s) {
    AttentionAxes a;
    a.batch = s.at("batch"), a.seq = s.at("seq"), a.heads = s.at("heads"), a.kv_heads = s.at("kv_heads");
    a.head_dim = s.at("head_dim");
    a.causal = s.choice("causal") == "1";
    a.softcap = std::stod(s.choice("softcap"));
    return {a, s.at("block"), s.at("density")};
  }
  std::int64_t blocks() const { return (attention.seq + block - 1) / block; }
  bool kept(std::int64_t b, std::int64_t h, std::int64_t qb, std::int64_t kb) const {
    return block_kept(b, h, qb, kb, attention.heads, blocks(), density, attention.causal);
  }
  // Visible (query, key) pairs inside kept blocks, summed over every (batch, head): the work
  // model's count. A kept block below the diagonal (or any, without causal) holds rows x keys
  // pairs; a kept diagonal block under causal its lower triangle.
  double kept_pairs() const;
  // Kept blocks, and row blocks of some (batch, head) that keep none (rows that see no key).
  std::int64_t kept_blocks() const;
  std::int64_t empty_row_blocks() const;
  // The most keys a row sees (kept blocks x block, at most seq; at least 1): the K of its
  // reduction, which the error bounds scale with.
  std::int64_t max_keys() const;
};

}  // namespace block_sparse
}  // namespace kwb
