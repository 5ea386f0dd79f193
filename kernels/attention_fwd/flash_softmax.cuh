// The softmax half of the attention_fwd flash kernels, shared by fused_v1 (mma.sync) and
// fused_v2 (wgmma): both hold a warp's 16 rows of S in the m16n8 C-fragment layout (an m64nN
// wgmma accumulator is that layout repeated per warp), so the same code masks, exponentiates
// and reduces them.
//
// Element (j, e) of a tile with kCols columns (j < kCols / 8, e < 4) sits at row g + 8 (e >> 1)
// of the warp's 16 (g = lane / 4) and column 8 j + 2 c + (e & 1) (c = lane % 4): a row's
// values are spread over the quad of 4 lanes with the same g, reduced with __shfl_xor 1 and 2.
//
// Logits are in log2 units, x = l * log2(e), so that every exponential is one exp2. Uncapped, the
// tile's max is taken over the raw scores (the scale is positive) and the scale folds into the
// exponent's FMA, P = 2^(s * scale * log2(e) - m); capped, x = cap * log2(e) * tanh(s * scale /
// cap) first. The running max m is in log2 units either way.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/flash_mma.cuh"

namespace kwb {
namespace flash {

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// Raw score s = q . k -> logit in log2 units.
struct LogitMap {
  float scale_log2 = 0, cap_log2 = 0, scale_over_cap = 0;
  bool capped = false;

  __host__ __device__ static LogitMap of(const AttentionParams& p) {
    LogitMap m;
    m.capped = p.softcap > 0;
    m.scale_log2 = p.scale * kLog2e;
    m.cap_log2 = p.softcap * kLog2e;
    m.scale_over_cap = m.capped ? p.scale / p.softcap : 0.0f;
    return m;
  }
  __device__ __forceinline__ float operator()(float s) const { return capped ? capped_log2(s) : s * scale_log2; }
  // The soft-capped logit alone: for loops that decided `capped` outside (a per-element test
  // makes the compiler branch around every score).
  __device__ __forceinline__ float capped_log2(float s) const { return cap_log2 * tanhf(s * scale_over_cap); }
  // The backward's recomputed probability from a raw score s and its row's lse (log2 units), P =
  // 2^(x - lse), and dl/ds's soft-cap factor 1 - t^2 (1 uncapped; the scale is applied to dK and dQ
  // at the end).
  template <bool kCapped>
  __device__ __forceinline__ float backward_prob(float s, float lse_log2, float& dlogit) const;
};

// Whether the key tile [k0, k0 + cols) needs a per-element mask for query rows [q_first,
// q_last]: not when every one of those rows sees every key of it (and the keys lie inside the
// sequence). first_key and end_key grow with the row, so the two end rows decide.
__device__ __forceinline__ bool tile_needs_mask(const AttentionParams& p, std::int64_t q_first, std::int64_t q_last,
                                                std::int64_t k0, int cols) {
  return !(p.first_key(q_last) <= k0 && p.end_key(q_first) >= k0 + cols);
}

// f(std::bool_constant<capped>{}, std::bool_constant<masked>{}): a tile's elementwise loop compiled
// once per combination and chosen once per tile. Tested per element, the soft-cap and the mask made
// the compiler branch around every score (about 24 instructions a score where 5 do).
template <class F>
__device__ __forceinline__ void with_cap_and_mask(bool capped, bool masked, F&& f) {
  if (capped) {
    if (masked) f(std::true_type{}, std::true_type{});
    else f(std::true_type{}, std::false_type{});
  } else {
    if (masked) f(std::false_type{}, std::true_type{});
    else f(std::false_type{}, std::false_type{});
  }
}

// 2^x in one MUFU.EX2 (exp2f adds a range fix-up around it for results below 2^-126, which a
// softmax weight that small does not need: it flushes to 0, far inside every tolerance).
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

template <bool kCapped>
__device__ __forceinline__ float LogitMap::backward_prob(float s, float lse_log2, float& dlogit) const {
  if constexpr (kCapped) {
    const float t = tanhf(s * scale_over_cap);
    dlogit = 1 - t * t;
    return fast_exp2(fmaf(cap_log2, t, -lse_log2));
  } else {
    dlogit = 1;
    return fast_exp2(fmaf(s, scale_log2, -lse_log2));
  }
}

__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

// The running max m and sum l of a thread's two rows (log2 units; l is this thread's part of
// the row until total() reduces it over the quad).
struct OnlineSoftmax {
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0, 0};

  // One key tile: s(j, e) (a float&) holds raw scores on entry and P = 2^(x - m_new) on exit;
  // rescale[r] = 2^(m_old - m_new) is what the caller multiplies its O rows by. The soft-cap and
  // the per-element mask are decided once per tile (with_cap_and_mask), outside the elements'
  // loop: per element they kept the tensor cores waiting on the softmax.
  template <int kCols, class At>
  __device__ __forceinline__ void step(At&& s, const LogitMap& logit, const AttentionParams& p, bool needs_mask,
                                       const std::int64_t (&row_of)[2], std::int64_t k0, int c, float (&rescale)[2]) {
    // Row r sees the tile's columns [lo[r], hi[r]) (clamped to the tile, so 32-bit).
    int lo[2] = {0, 0}, hi[2] = {kCols, kCols};
    if (needs_mask)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const std::int64_t first = p.first_key(row_of[r]) - k0, end = p.end_key(row_of[r]) - k0;
        lo[r] = static_cast<int>(first < 0 ? 0 : first > kCols ? kCols : first);
        hi[r] = static_cast<int>(end < 0 ? 0 : end > kCols ? kCols : end);
      }
    with_cap_and_mask(logit.capped, needs_mask, [&](auto capped, auto masked) {
      step_as<kCols, decltype(capped)::value, decltype(masked)::value>(s, logit, lo, hi, c, rescale);
    });
  }

  // The tile's steps with the soft-cap and the mask fixed. Uncapped, the max is taken over the raw
  // scores (the scale is positive, so the same key wins) and the scale is folded into the
  // exponent's one FMA: P = 2^(s scale_log2 - m); capped, x = cap_log2 tanh(s scale / cap) is
  // already in log2 units (multiplier 1).
  template <int kCols, bool kCapped, bool kMasked, class At>
  __device__ __forceinline__ void step_as(At&& s, const LogitMap& logit, const int (&lo)[2], const int (&hi)[2], int c,
                                          float (&rescale)[2]) {
    const float to_log2 = kCapped ? 1.0f : logit.scale_log2;
    float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int j = 0; j < kCols / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float x = kCapped ? logit.capped_log2(s(j, e)) : s(j, e);
        if constexpr (kMasked) {
          const int col = j * 8 + 2 * c + (e & 1);
          if (col < lo[e >> 1] || col >= hi[e >> 1]) x = -INFINITY;
        }
        s(j, e) = x;
        tile_max[e >> 1] = fmaxf(tile_max[e >> 1], x);
      }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float new_max = fmaxf(row_max[r], quad_max(tile_max[r]) * to_log2);
      // A row that has seen no key yet keeps max -inf: subtract 0 instead (exp2(-inf) = 0, no NaN).
      const float use_max = new_max == -INFINITY ? 0.0f : new_max;
      rescale[r] = fast_exp2(row_max[r] - use_max);
      row_max[r] = new_max;
      row_sum[r] *= rescale[r];
#pragma unroll
      for (int j = 0; j < kCols / 8; ++j) {
        const float p0 = fast_exp2(fmaf(s(j, 2 * r), to_log2, -use_max));
        const float p1 = fast_exp2(fmaf(s(j, 2 * r + 1), to_log2, -use_max));
        s(j, 2 * r) = p0;
        s(j, 2 * r + 1) = p1;
        row_sum[r] += p0 + p1;
      }
    }
  }

  // The row's whole sum l (every lane of the quad gets it).
  __device__ __forceinline__ float total(int r) const { return quad_sum(row_sum[r]); }
  // lse = (m + log2 l) ln 2: the natural log, as FlashAttention saves it.
  __device__ __forceinline__ float lse(int r, float total_sum) const {
    return (row_max[r] + log2f(total_sum)) * kLn2;
  }
};

// The end of a flash kernel, for a warp's two rows: O / l rounded to T with 4-byte stores (rows
// past seq skipped) and lse = (m + log2 l) ln 2 in fp32 (the natural log, as FlashAttention saves
// it), dense or packed (AttentionParams::cu_seqlens; `start` is the sequence's first token).
// o_at(j, e) is element e of the thread's O accumulators for columns 8 j .. 8 j + 7 (the m16n8 C
// layout, as for S).
template <class T, int D, class At>
__device__ __forceinline__ void store_output(const OnlineSoftmax& softmax, At&& o_at, const AttentionParams& p,
                                             std::int64_t batch, std::int64_t head, std::int64_t start,
                                             const std::int64_t (&row_of)[2], int c, T* __restrict__ o,
                                             float* __restrict__ lse) {
  T* o_base = o + (start * p.heads + head) * D;  // `start`: the sequence's first token (enter_sequence)
  float* lse_base = lse + p.lse_index(batch, head, start, 0);
  const std::int64_t q_stride = p.heads * D;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float sum = softmax.total(r);
    const std::int64_t row = row_of[r];
    if (row >= p.seq) continue;
    const float inv = sum > 0 ? 1.0f / sum : 0.0f;
    T* out = o_base + row * q_stride;
#pragma unroll
    for (int j = 0; j < D / 8; ++j)
      *reinterpret_cast<std::uint32_t*>(out + j * 8 + 2 * c) =
          pack2<T>(o_at(j, 2 * r) * inv, o_at(j, 2 * r + 1) * inv);
    if (c == 0) lse_base[row] = softmax.lse(r, sum);
  }
}

}  // namespace flash
}  // namespace kwb
