// What mean_pooling_fwd's fused variants share: a sequence's tokens cut into slices so that a
// short batch still fills the GPU, the loop that sums a slice's kept rows in fp32, the kernel that
// stores those sums as partials (which a second kernel adds and divides: fused_v1's and fused_v2's
// own; fused_v3 by default combines in its own last blocks instead), and the partials' workspace.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "harness/catalogue/types.hpp"
#include "kernels/common/dependent_launch.cuh"
#include "kernels/common/l2_hints.cuh"
#include "kernels/common/vector_pack.cuh"
#include "reference/mean_pooling.hpp"

namespace kwb {
namespace pooling {

constexpr int kThreads = 128;
constexpr int kMostMultiprocessors = 256;  // what the workspaces are sized for (an H100 has 132)

// The blocks_per_sm tunable's values; the workspaces are sized for the largest.
constexpr std::int64_t kBlocksPerSmValues[] = {16, 8, 4};
constexpr std::int64_t kMostBlocksPerSm = 16;
static_assert(*std::ranges::max_element(kBlocksPerSmValues) == kMostBlocksPerSm);

// Blocks of `block_columns` columns across a row of `hidden`.
inline std::int64_t column_blocks(std::int64_t hidden, std::int64_t block_columns) {
  return (hidden + block_columns - 1) / block_columns;
}

// Slices of the tokens: enough blocks (of `block_columns` columns each) for `blocks_per_sm` a
// multiprocessor, each slice at least 16 tokens long (shorter ones would spend more on partials
// than on rows). `at_most_one_wave`: rounded down instead, so the grid never exceeds
// blocks_per_sm x sms (fused_v3, whose claims can only even out resident blocks).
inline std::int64_t slices_for(const PoolingAxes& p, std::int64_t block_columns, int sms,
                               std::int64_t blocks_per_sm, bool at_most_one_wave = false) {
  const std::int64_t blocks = column_blocks(p.hidden, block_columns) * p.batch;
  const std::int64_t slots = blocks_per_sm * sms;
  const std::int64_t wanted = at_most_one_wave ? slots / blocks : (slots + blocks - 1) / blocks;
  return std::clamp<std::int64_t>(wanted, 1, std::max<std::int64_t>(1, p.seq / 16));
}

// The partials of the most slices any tunable asks for: blocks of `block_columns` columns (the
// widest a variant uses: the fewest along the columns, so the most slices), the most blocks a
// multiprocessor, on the most multiprocessors.
inline std::size_t partial_bytes(const PoolingAxes& p, std::int64_t block_columns) {
  const std::int64_t slices = slices_for(p, block_columns, kMostMultiprocessors, kMostBlocksPerSm);
  return static_cast<std::size_t>(p.batch * slices * p.hidden) * sizeof(float);
}

// Both variants put the sequence in blockIdx.z.
inline std::optional<std::string> refuse_batch_beyond_grid(const Shape& s, DType) {
  if (s.at("batch") > 65535) return "batch above 65535 exceeds the grid's z dimension";
  return std::nullopt;
}

// Elements of a 16-byte pack, or 1 where the hidden size is no multiple of it.
inline int pack_for(std::int64_t hidden, DType dtype) {
  const int pack = static_cast<int>(16 / dtype_size(dtype));
  return hidden % pack == 0 ? pack : 1;
}

// The mask bits of rows [s0, s0 + Rows) that lie before `last`, one bit a row.
template <int Rows>
__device__ __forceinline__ unsigned kept_bits(const bool* m, std::int64_t s0, std::int64_t last) {
  unsigned bits = 0;
#pragma unroll
  for (int r = 0; r < Rows; ++r)
    if (s0 + r < last && m[s0 + r]) bits |= 1u << r;
  return bits;
}

// A pack of the input: 16 bytes with H's hint, else a plain load.
template <l2::Hint H, class P>
__device__ __forceinline__ P load_pack(const P* p, std::uint64_t policy) {
  if constexpr (H == l2::Hint::kNormal) return *p;
  else return l2::load16<H>(p, policy);
}

// Adds the kept rows of [first, last) into acc: thread t owns Packs packs of E columns, 128 E
// apart, from `col` (xb points at the sequence's row 0, column col; m at its mask), and walks the
// rows, skipping a token the mask drops (a whole row: the branch is uniform across the block, and
// the row is never read), Rows rows' loads in flight at a time; the next group's mask bits are
// read while this group's rows are in flight, so that a row's load never waits behind its own
// mask byte. H: the L2 hint on the row loads (l2_hints.cuh), for 16-byte packs.
template <class T, int E, int Rows, int Packs, l2::Hint H>
__device__ __forceinline__ void sum_kept_rows(float (&acc)[Packs][E], const T* __restrict__ xb,
                                              const bool* __restrict__ m, std::int64_t first,
                                              std::int64_t last, std::int64_t col,
                                              std::int64_t hidden) {
  constexpr int kStride = kThreads * E;
  static_assert(H == l2::Hint::kNormal || sizeof(Pack<T, E>) == 16, "hints are for 16-byte packs");
  const std::uint64_t policy = H == l2::Hint::kEvictFirst ? l2::policy_evict_first() : 0;
  unsigned kept = kept_bits<Rows>(m, first, last);
  for (std::int64_t s0 = first; s0 < last; s0 += Rows) {
    Pack<T, E> rows[Rows][Packs];
#pragma unroll
    for (int r = 0; r < Rows; ++r)
#pragma unroll
      for (int k = 0; k < Packs; ++k)
        if ((kept & (1u << r)) && col + k * kStride < hidden)
          rows[r][k] = load_pack<H>(
              reinterpret_cast<const Pack<T, E>*>(xb + (s0 + r) * hidden + k * kStride), policy);
    const unsigned next = kept_bits<Rows>(m, s0 + Rows, last);
#pragma unroll
    for (int r = 0; r < Rows; ++r)
      if (kept & (1u << r))
#pragma unroll
        for (int k = 0; k < Packs; ++k)
#pragma unroll
          for (int e = 0; e < E; ++e) acc[k][e] += to_float(rows[r][k].v[e]);
    kept = next;
  }
}

// partial[b, slice, col ...] = acc, the columns this thread owns (sum_kept_rows's layout).
template <int E, int Packs>
__device__ __forceinline__ void store_partial(float* partial, const float (&acc)[Packs][E],
                                              std::int64_t b, std::int64_t slice,
                                              std::int64_t slices, std::int64_t col,
                                              std::int64_t hidden) {
  constexpr int kStride = kThreads * E;
  float* out = partial + (b * slices + slice) * hidden + col;
#pragma unroll
  for (int k = 0; k < Packs; ++k)
    if (col + k * kStride < hidden)
#pragma unroll
      for (int e = 0; e < E; ++e) out[k * kStride + e] = acc[k][e];
}

// Block (column block, slice, sequence) sums the slice's kept rows (sum_kept_rows) into
// partial [batch, slices, hidden]. Each block allows a dependent combine as it ends
// (allow_dependent_launch): that grid launches once every block has; a plain launch is unaffected.
template <class T, int E, int Rows, int Packs, l2::Hint H>
__global__ void __launch_bounds__(kThreads)
    pool_slices(const T* __restrict__ x, const bool* __restrict__ mask, float* __restrict__ partial,
                std::int64_t seq, std::int64_t hidden, std::int64_t rows_per_slice) {
  const std::int64_t col = blockIdx.x * std::int64_t{kThreads} * E * Packs + threadIdx.x * E;
  const std::int64_t b = blockIdx.z, slice = blockIdx.y, slices = gridDim.y;
  if (col >= hidden) return;
  const std::int64_t first = slice * rows_per_slice, last = std::min(seq, first + rows_per_slice);
  float acc[Packs][E] = {};
  sum_kept_rows<T, E, Rows, Packs, H>(acc, x + b * seq * hidden + col, mask + b * seq, first, last,
                                   col, hidden);
  store_partial<E, Packs>(partial, acc, b, slice, slices, col, hidden);
  allow_dependent_launch();
}

}  // namespace pooling
}  // namespace kwb
