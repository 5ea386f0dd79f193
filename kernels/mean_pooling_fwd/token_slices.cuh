// What mean_pooling_fwd's fused variants share: a sequence's tokens cut into slices so that a
// short batch still fills the GPU (each slice leaves fp32 partial sums that a second kernel adds
// in slice order), the mask bits of a group of rows, and the pack a hidden size allows.
#pragma once

#include <algorithm>
#include <cstdint>

#include "harness/catalogue/types.hpp"
#include "reference/mean_pooling.hpp"

namespace kwb {
namespace pooling {

constexpr int kThreads = 128;
constexpr int kMostMultiprocessors = 256;  // what the workspaces are sized for (an H100 has 132)

// The blocks_per_sm tunable's values; the workspaces are sized for the largest.
constexpr std::int64_t kBlocksPerSmValues[] = {16, 8, 4};
constexpr std::int64_t kMostBlocksPerSm = 16;
static_assert(*std::ranges::max_element(kBlocksPerSmValues) == kMostBlocksPerSm);

// Slices of the tokens: enough blocks (of `block_columns` columns each) for `blocks_per_sm` a
// multiprocessor, each slice at least 16 tokens long (shorter ones would spend more on partials
// than on rows).
inline std::int64_t slices_for(const PoolingAxes& p, std::int64_t block_columns, int sms, std::int64_t blocks_per_sm) {
  const std::int64_t column_blocks = (p.hidden + block_columns - 1) / block_columns;
  const std::int64_t blocks = column_blocks * p.batch;
  const std::int64_t wanted = (blocks_per_sm * sms + blocks - 1) / blocks;
  return std::clamp<std::int64_t>(wanted, 1, std::max<std::int64_t>(1, p.seq / 16));
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

}  // namespace pooling
}  // namespace kwb
