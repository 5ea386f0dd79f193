// The host arithmetic of paged_attention_decode's flash-decoding launch (flash_decode_launch.cuh),
// plain C++ so that CPU tests check it: how a kv head's query rows fall into 16-row tiles and
// blocks, how many key splits a plan may use (which sizes the workspace), how the splits divide
// the keys and how many the GPU's resident blocks ask for (counting only the blocks that hold
// keys), and where the partial outputs and the splits' arrival counters sit in the workspace.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

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

// The workspace of fused_v1 and fused_v2: the sequence order (batch int32), then with splits
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


// ---- Stream-K (fused_v3): every block the same number of key tiles, across sequences.
// A ragged batch in one wave leaves the split plan's blocks unequal: b16 q4 ctx8192 h32/8 has 1370
// key tiles a kv head for 33 slots, 41.5 a slot, but whole splits of one length give its longest
// block 53 (2026-11-27 notebook), and the wave ends with the longest. Stream-K cuts the kv head's
// tiles, all sequences' laid end to end, into `workers` runs of equal count (within one tile); a
// run that crosses a sequence's end carries on into the next sequence as a new piece. Each piece is
// a split of its sequence, merged as fused_v2 merges splits.
struct Piece {
  std::int32_t seq = 0, key_begin = 0, key_end = 0;
  std::int32_t index = 0;  // of the sequence's pieces, in key order
  std::int32_t count = 0;  // pieces of the sequence
  std::int32_t first = 0;  // the sequence's first piece in the plan (its pieces are consecutive)
};

// The most workers a (kv head, row block) takes: kMaxBlocks blocks in all. With the batch it bounds
// the pieces (each worker boundary adds at most one) and so the workspace, without the GPU.
inline std::int64_t max_workers(const PagedDecodeAxes& a) {
  return std::max<std::int64_t>(1, kMaxBlocks / (a.kv_heads * row_blocks(a)));
}
inline std::int64_t max_pieces(const PagedDecodeAxes& a) { return max_workers(a) + a.batch - 1; }

struct StreamKPlan {
  std::vector<std::int32_t> worker_first;  // worker w runs pieces [worker_first[w], worker_first[w + 1])
  std::vector<Piece> pieces;
  int workers() const { return static_cast<int>(worker_first.size()) - 1; }
};

// `lengths`: each sequence's keys (the device's context_lens, read back in prepare()); `workers`
// asked (clamped to 1..max_workers and to the tiles there are). Worker w takes the tiles
// [w T / W, (w + 1) T / W) of the T tiles, so counts differ by at most one.
inline StreamKPlan stream_k_plan(const PagedDecodeAxes& a, const std::vector<std::int64_t>& lengths,
                                 std::int64_t workers) {
  std::vector<std::int64_t> first_tile(lengths.size() + 1, 0);  // tiles before sequence b
  for (std::size_t b = 0; b < lengths.size(); ++b)
    first_tile[b + 1] = first_tile[b] + (lengths[b] + kTileKeys - 1) / kTileKeys;
  const std::int64_t tiles = first_tile.back();
  const std::int64_t w_count = std::max<std::int64_t>(1, std::min({workers, max_workers(a), tiles}));
  StreamKPlan plan;
  plan.worker_first.push_back(0);
  std::size_t b = 0;
  for (std::int64_t w = 0; w < w_count; ++w) {
    const std::int64_t end = (w + 1) * tiles / w_count;
    for (std::int64_t t = w * tiles / w_count; t < end;) {
      while (first_tile[b + 1] <= t) ++b;  // the sequence holding tile t (skips empty ones)
      const std::int64_t stop = std::min(end, first_tile[b + 1]);
      Piece piece;
      piece.seq = static_cast<std::int32_t>(b);
      piece.key_begin = static_cast<std::int32_t>((t - first_tile[b]) * kTileKeys);
      piece.key_end = static_cast<std::int32_t>(std::min((stop - first_tile[b]) * kTileKeys, lengths[b]));
      plan.pieces.push_back(piece);
      t = stop;
    }
    plan.worker_first.push_back(static_cast<std::int32_t>(plan.pieces.size()));
  }
  // Each sequence's pieces lie consecutively, in key order: number them.
  for (std::size_t i = 0; i < plan.pieces.size();) {
    std::size_t j = i;
    while (j < plan.pieces.size() && plan.pieces[j].seq == plan.pieces[i].seq) ++j;
    for (std::size_t k = i; k < j; ++k) {
      plan.pieces[k].index = static_cast<std::int32_t>(k - i);
      plan.pieces[k].count = static_cast<std::int32_t>(j - i);
      plan.pieces[k].first = static_cast<std::int32_t>(i);
    }
    i = j;
  }
  return plan;
}

// fused_v3's workspace: the workers' first pieces, the pieces, then partial O (D fp32 per row of a
// block's M x 16 rows, per piece, per (kv head, row block)), partial lse (one per such row) and
// the arrival counters, each part 256-byte aligned.
inline std::int64_t block_rows(const PagedDecodeAxes& a) { return tiles_per_block(a) * kRows; }
inline std::size_t sk_pieces_offset(const PagedDecodeAxes& a) {
  return align_up(static_cast<std::size_t>(max_workers(a) + 1) * 4);
}
inline std::size_t sk_partial_o_offset(const PagedDecodeAxes& a) {
  return sk_pieces_offset(a) + align_up(static_cast<std::size_t>(max_pieces(a)) * sizeof(Piece));
}
inline std::size_t sk_partial_rows(const PagedDecodeAxes& a) {
  return static_cast<std::size_t>(a.kv_heads * row_blocks(a) * max_pieces(a) * block_rows(a));
}
inline std::size_t sk_partial_lse_offset(const PagedDecodeAxes& a) {
  return sk_partial_o_offset(a) + align_up(sk_partial_rows(a) * static_cast<std::size_t>(a.head_dim) * 4);
}
inline std::size_t sk_counters_offset(const PagedDecodeAxes& a) {
  return sk_partial_lse_offset(a) + align_up(sk_partial_rows(a) * 4);
}
inline std::size_t stream_k_workspace_bytes(const PagedDecodeAxes& a) { return sk_counters_offset(a) + counters_bytes(a); }

}  // namespace flash_decode
}  // namespace kwb
