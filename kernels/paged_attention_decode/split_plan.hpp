// The host arithmetic of paged_attention_decode's flash-decoding launch (flash_decode_launch.cuh),
// plain C++ so that CPU tests check it: how a kv head's query rows fall into 16-row tiles and
// blocks, how many key splits a plan may use (which sizes the workspace), how the splits divide
// the keys and how many the GPU's resident blocks ask for (counting only the blocks that hold
// keys), and where the partial outputs and the splits' arrival counters sit in the workspace.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/common/align_up.hpp"
#include "reference/paged_attention_decode.hpp"

namespace kwb {
namespace flash_decode {

using paged_decode::PagedDecodeAxes;

constexpr int kWarps = 4;                // per 16-row tile
constexpr int kRows = 16;                // query rows per tile: one m16 fragment
constexpr int kTileKeys = kWarps * 16;   // keys per ring stage: 16 per warp
constexpr int kMaxTilesPerBlock = 2;
// The most blocks a split plan aims at (4 per SM on 256 SMs): bounds the workspace without the GPU.
constexpr std::int64_t kMaxBlocks = 1024;

// Row tiles of 16 per kv head, M of them per block (2 where there are two or more), and the
// blocks along the rows.
inline std::int64_t row_tiles(const PagedDecodeAxes& a) { return (a.group() * a.q_len + kRows - 1) / kRows; }
inline int tiles_per_block(const PagedDecodeAxes& a) { return row_tiles(a) >= 2 ? kMaxTilesPerBlock : 1; }
inline std::int64_t row_blocks(const PagedDecodeAxes& a) {
  return (row_tiles(a) + tiles_per_block(a) - 1) / tiles_per_block(a);
}
inline std::int64_t base_blocks(const PagedDecodeAxes& a) { return a.batch * a.kv_heads * row_blocks(a); }

// The most splits any GPU's plan uses: one key tile each at least, and no more than kMaxBlocks
// blocks in all once the batch already gives one each.
inline std::int64_t max_splits(const PagedDecodeAxes& a) {
  const std::int64_t tiles = (a.context + kTileKeys - 1) / kTileKeys;
  return std::max<std::int64_t>(1, std::min(tiles, kMaxBlocks / base_blocks(a)));
}

// Keys per split (whole key tiles) for `splits` asked, and the splits that then hold keys of the
// longest sequence (never more than asked).
struct KeySplit {
  std::int64_t split_keys = 0;
  int splits = 1;
};
inline KeySplit key_split(const PagedDecodeAxes& a, std::int64_t splits) {
  const std::int64_t tiles = (a.context + kTileKeys - 1) / kTileKeys;
  KeySplit k;
  k.split_keys = (tiles + splits - 1) / splits * kTileKeys;
  k.splits = static_cast<int>((a.context + k.split_keys - 1) / k.split_keys);
  return k;
}

// The blocks of a plan that hold keys: each (sequence, kv head, row block) takes the splits of
// `split_keys` its own length fills. The grid covers the longest sequence; a shorter one's blocks
// past its end exit at once and hold no slot for long.
inline std::int64_t blocks_with_keys(const PagedDecodeAxes& a, std::int64_t split_keys) {
  std::int64_t splits = 0;
  for (std::int64_t b = 0; b < a.batch; ++b) splits += (a.length(b) + split_keys - 1) / split_keys;
  return splits * a.kv_heads * row_blocks(a);
}

// The plan's split for `slots` resident blocks (waves x SMs x blocks per SM; 0: no splitting): the
// fewest keys per split (whole key tiles, at most max_splits splits of the longest sequence) whose
// blocks holding keys fit the slots, so that the work fills whole waves and starts no partial one.
// With equal lengths that is slots / base_blocks splits; with ragged ones the short sequences'
// empty splits are not counted, so the splits are finer and the longest sequence's blocks, the
// critical path, shorter. blocks_with_keys only grows as the split shrinks, so the search stops at
// the first split that overflows.
inline KeySplit plan_split(const PagedDecodeAxes& a, std::int64_t slots) {
  KeySplit best = key_split(a, 1);
  if (slots <= 0) return best;
  for (std::int64_t tiles = best.split_keys / kTileKeys - 1; tiles >= 1; --tiles) {
    const std::int64_t split_keys = tiles * kTileKeys, splits = (a.context + split_keys - 1) / split_keys;
    if (splits > max_splits(a) || blocks_with_keys(a, split_keys) > slots) break;
    best = {split_keys, static_cast<int>(splits)};
  }
  return best;
}

// Whether the launch takes its sequences longest first: when their lengths differ and the grid is
// more than one wave of `slots` resident blocks, the blocks of the later waves start as earlier
// ones end, and the longest sequences started last would run on alone at the end (b64 ragged at
// 8k tokens: 512 blocks on 264 slots). Longest first, the last to start are the shortest: the
// classic longest-processing-time order. In one wave every block starts at once and the order
// only adds a load to each block's start. The order is a schedule, not a result: any permutation
// gives the same output, so lengths on the device that differ from the host's formula only cost
// time.
inline bool takes_longest_first(const PagedDecodeAxes& a, std::int64_t grid_blocks, std::int64_t slots) {
  return a.ragged && slots > 0 && grid_blocks > slots;
}

// The sequences by decreasing length (ties in index order): grid z = i runs sequence order[i].
inline std::vector<std::int32_t> longest_first(const PagedDecodeAxes& a) {
  std::vector<std::int32_t> order(static_cast<std::size_t>(a.batch));
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](std::int32_t x, std::int32_t y) { return a.length(x) > a.length(y); });
  return order;
}

// The workspace of both fused variants: the sequence order (batch int32), then with splits
// partial_o (D fp32 per split and output row), partial_lse (one each) after it and one arrival
// counter per (sequence, kv head, row block), each part 256-byte aligned. The counters start at
// zero (prepare() clears them once) and the kernel leaves them at zero: the last split to arrive
// at a counter combines and resets it.
inline std::size_t order_bytes(const PagedDecodeAxes& a) { return align_up(static_cast<std::size_t>(a.batch) * 4); }
inline std::size_t partial_o_offset(const PagedDecodeAxes& a) { return order_bytes(a); }
inline std::size_t partial_o_bytes(const PagedDecodeAxes& a) {
  const std::size_t rows = static_cast<std::size_t>(a.batch * a.q_len * a.heads * max_splits(a));
  return align_up(rows * static_cast<std::size_t>(a.head_dim) * 4);
}
inline std::size_t partial_lse_offset(const PagedDecodeAxes& a) { return partial_o_offset(a) + partial_o_bytes(a); }
inline std::size_t partial_lse_bytes(const PagedDecodeAxes& a) {
  return align_up(static_cast<std::size_t>(a.batch * a.q_len * a.heads * max_splits(a)) * 4);
}
inline std::size_t counters_offset(const PagedDecodeAxes& a) { return partial_lse_offset(a) + partial_lse_bytes(a); }
inline std::size_t counters_bytes(const PagedDecodeAxes& a) { return static_cast<std::size_t>(base_blocks(a)) * 4; }
inline std::size_t decode_workspace_bytes(const PagedDecodeAxes& a, bool split) {
  if (!split || max_splits(a) == 1) return order_bytes(a);
  return counters_offset(a) + counters_bytes(a);
}

}  // namespace flash_decode
}  // namespace kwb
