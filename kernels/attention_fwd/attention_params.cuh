// What every attention kernel (attention_fwd's and attention_bwd's, and those of the packed and
// block-sparse forwards) reads from a case: the dims, the mask (causal, sliding window, as
// reference/attention.hpp defines it; packed sequences' offsets; a block mask) and the logit
// transform (scale, soft-cap), on host and
// device alike, so that the baseline's softmax and the flash kernels mask identically; and the
// dtype dispatch every variant registers (fp16 and bf16: the op has no fp32 cases).
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "harness/catalogue/typed_launch.cuh"
#include "reference/attention.hpp"

namespace kwb {

// The case's axes as the kernels take them (a kernel argument, by value): float scale and soft-cap.
struct AttentionParams {
  std::int64_t batch = 0, seq = 0, heads = 0, kv_heads = 0, head_dim = 0;
  bool causal = false;
  std::int64_t window = 0;  // 0: none
  float softcap = 0;        // 0: none
  float scale = 0;          // 1 / sqrt(head_dim)
  // Packed sequences (attention_varlen_fwd): sequence b holds tokens [cu_seqlens[b],
  // cu_seqlens[b + 1]) of `total`, and seq is the longest; lse is [heads, total]. Null: the dense
  // [batch, seq] layout, lse [batch, heads, seq].
  const std::int32_t* cu_seqlens = nullptr;
  std::int64_t total = 0;
  // Block-sparse attention (block_sparse_attention_fwd): block_mask [batch, heads, blocks, blocks],
  // nonzero where query block i / block may see key block j / block. Null: no block mask.
  const std::uint8_t* block_mask = nullptr;
  std::int64_t block = 0, blocks = 0;

  // Where sequence `batch` starts among the tokens, its length made the block's seq (a kernel's
  // own copy of the params). Dense: batch * seq, seq unchanged.
  __device__ std::int64_t enter_sequence(std::int64_t batch) {
    if (!cu_seqlens) return batch * seq;
    const std::int64_t start = cu_seqlens[batch];
    seq = cu_seqlens[batch + 1] - start;
    return start;
  }
  // lse's element of (batch, head, row) for a sequence starting at `start`.
  __host__ __device__ std::int64_t lse_index(std::int64_t batch, std::int64_t head, std::int64_t start,
                                             std::int64_t row) const {
    return cu_seqlens ? head * total + start + row : (batch * heads + head) * seq + row;
  }

  // The block mask's row of query block `q_block` of (batch, head): blocks entries.
  __host__ __device__ const std::uint8_t* block_mask_row(std::int64_t batch, std::int64_t head,
                                                          std::int64_t q_block) const {
    return block_mask + ((batch * heads + head) * blocks + q_block) * blocks;
  }

  static AttentionParams of(const AttentionAxes& axes) {
    AttentionParams p;
    p.batch = axes.batch;
    p.seq = axes.seq;
    p.heads = axes.heads;
    p.kv_heads = axes.kv_heads;
    p.head_dim = axes.head_dim;
    p.causal = axes.causal;
    p.window = axes.window;
    p.softcap = static_cast<float>(axes.softcap);
    p.scale = 1.0f / std::sqrt(static_cast<float>(p.head_dim));
    return p;
  }

  // Keys query i sees: [first_key(i), end_key(i)).
  __host__ __device__ std::int64_t first_key(std::int64_t i) const {
    return window > 0 && i - window + 1 > 0 ? i - window + 1 : 0;
  }
  __host__ __device__ std::int64_t end_key(std::int64_t i) const {
    std::int64_t end = seq;
    if (causal) end = i + 1;
    else if (window > 0) end = i + window;
    return end < seq ? end : seq;
  }
  __host__ __device__ bool visible(std::int64_t i, std::int64_t j) const {
    return j >= first_key(i) && j < end_key(i);
  }
  // The queries that see key j: [first_query(j), end_query(j)), the inverse of the two above
  // (AttentionMask's, reference/attention.hpp). Causal: i >= j (and i < j + w with a window); a
  // window without causal: |i - j| < w; none: every query.
  __host__ __device__ std::int64_t first_query(std::int64_t j) const {
    if (causal) return j;
    return window > 0 && j - window + 1 > 0 ? j - window + 1 : 0;
  }
  __host__ __device__ std::int64_t end_query(std::int64_t j) const {
    return window > 0 && j + window < seq ? j + window : seq;
  }
};

// Element i of a [b, h, s, d] tensor comes from head (h_i / group) of a [b, s, src_heads, d] one:
// repeat_kv's expansion (group = h / kv_heads) or a plain transpose (group 1). The materialised
// baselines' copies between the ops' bshd layout and the batched GEMMs' bhsd.
__device__ __forceinline__ std::int64_t bshd_index(std::int64_t i, std::int64_t s, std::int64_t h, std::int64_t d,
                                                   std::int64_t src_heads, std::int64_t group) {
  const std::int64_t e = i % d, t = (i / d) % s, hh = (i / (d * s)) % h, bb = i / (d * s * h);
  return ((bb * s + t) * src_heads + hh / group) * d + e;
}

}  // namespace kwb
