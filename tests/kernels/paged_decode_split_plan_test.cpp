// paged_attention_decode's split plan (kernels/paged_attention_decode/split_plan.hpp): the row
// tiles and blocks a kv head's queries take, the splits a GPU's resident blocks ask for (whole
// waves of the blocks that hold keys, within the workspace's bound), keys per split that cover the
// context in whole tiles with no split empty for the longest sequence, and a workspace that holds
// what the kernels index.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/paged_attention_decode/split_plan.hpp"

namespace kwb::flash_decode {
namespace {

PagedDecodeAxes axes(std::int64_t batch, std::int64_t q_len, std::int64_t context, std::int64_t heads,
                     std::int64_t kv_heads, std::int64_t head_dim = 128) {
  return PagedDecodeAxes::of(paged_decode::paged_decode_shape(batch, q_len, context, heads, kv_heads, head_dim, 16));
}

TEST(PagedDecodeSplitPlan, QueryRowsFillTilesOfSixteenTwoABlock) {
  EXPECT_EQ(row_tiles(axes(1, 1, 64, 32, 8)), 1);   // 4 rows
  EXPECT_EQ(tiles_per_block(axes(1, 1, 64, 32, 8)), 1);
  const auto a32 = axes(1, 8, 64, 16, 4);            // 4 x 8 = 32 rows
  EXPECT_EQ(row_tiles(a32), 2);
  EXPECT_EQ(tiles_per_block(a32), 2);
  EXPECT_EQ(row_blocks(a32), 1);
  const auto a40 = axes(1, 5, 64, 32, 4);            // 8 x 5 = 40 rows: tiles 0-1, then 2 and a padding tile
  EXPECT_EQ(row_tiles(a40), 3);
  EXPECT_EQ(row_blocks(a40), 2);
  EXPECT_EQ(base_blocks(a40), 1 * 4 * 2);
}

TEST(PagedDecodeSplitPlan, SplitsFillWholeWavesWithinTheWorkspacesBound) {
  // b8 h32/8: 64 blocks; an H100's 264 slots (132 SMs x 2) take 4 splits, not 5 (a tail wave).
  const auto b8 = axes(8, 1, 16384, 32, 8);
  EXPECT_EQ(plan_split(b8, 264).splits, 4);
  EXPECT_EQ(plan_split(b8, 264).split_keys, 4096);
  EXPECT_EQ(plan_split(b8, 0).splits, 1);                  // fused_v1: no splitting
  // A batch that already fills the slots is not split.
  EXPECT_EQ(plan_split(axes(32, 1, 4096, 32, 8), 264).splits, 1);
  // One sequence of few keys: no more splits than key tiles.
  const auto short_one = axes(1, 1, 100, 32, 8);     // 2 key tiles
  EXPECT_EQ(plan_split(short_one, 264).splits, 2);
  // Never past the blocks the workspace was sized for.
  const auto one = axes(1, 1, 1 << 20, 1, 1);
  EXPECT_EQ(max_splits(one), kMaxBlocks);
  EXPECT_EQ(plan_split(one, 100000).splits, kMaxBlocks);
}

TEST(PagedDecodeSplitPlan, RaggedBatchesCountOnlyTheBlocksThatHoldKeys) {
  // b16 q4 ctx8192 h32/8, lengths uniform over (2048, 8192]: 128 (sequence, kv head) pairs. Sized
  // on the longest sequence, 264 slots take 2 splits of 4096 keys, and the short sequences leave
  // their second split empty: 224 blocks hold keys. Counting those, the split is finer (3392 keys:
  // 264 blocks, the wave exactly) and the longest sequence's blocks, the critical path, 17% shorter.
  const auto a = PagedDecodeAxes::of(paged_decode::paged_decode_shape(16, 4, 8192, 32, 8, 128, 16, "ragged"));
  EXPECT_EQ(blocks_with_keys(a, 4096), 224);
  const KeySplit k = plan_split(a, 264);
  EXPECT_EQ(k.split_keys, 3392);
  EXPECT_EQ(k.splits, 3);
  EXPECT_EQ(blocks_with_keys(a, k.split_keys), 264);
  // One key tile finer would start a second wave.
  EXPECT_GT(blocks_with_keys(a, k.split_keys - kTileKeys), 264);
  // Equal lengths: every block holds keys, and the plan is slots / base_blocks splits.
  const auto equal = PagedDecodeAxes::of(paged_decode::paged_decode_shape(16, 4, 8192, 32, 8, 128, 16, "equal"));
  EXPECT_EQ(plan_split(equal, 264).splits, 264 / base_blocks(equal));
  EXPECT_EQ(blocks_with_keys(equal, plan_split(equal, 264).split_keys),
            base_blocks(equal) * (264 / base_blocks(equal)));
  // Every plan covers the longest sequence in whole tiles, none of its splits empty, within the
  // workspace's bound.
  for (const auto& shape : {a, equal, axes(8, 1, 16384, 32, 8), axes(1, 1, 100, 32, 8)})
    for (std::int64_t slots : {0, 132, 264, 528, 100000}) {
      const KeySplit p = plan_split(shape, slots);
      EXPECT_LE(p.splits, max_splits(shape));
      EXPECT_GE(p.split_keys * p.splits, shape.context);
      EXPECT_LT(p.split_keys * (p.splits - 1), shape.context);
      if (slots == 0) continue;
      // The blocks holding keys fit the slots (one split always runs), one tile finer does not fit
      // (or passes the workspace's bound), and never coarser than splitting on the longest sequence.
      if (p.splits > 1) EXPECT_LE(blocks_with_keys(shape, p.split_keys), slots);
      const std::int64_t finer = p.split_keys - kTileKeys;
      if (finer > 0)
        EXPECT_TRUE(blocks_with_keys(shape, finer) > slots ||
                    (shape.context + finer - 1) / finer > max_splits(shape));
      const std::int64_t on_longest = std::clamp<std::int64_t>(slots / base_blocks(shape), 1, max_splits(shape));
      EXPECT_LE(p.split_keys, key_split(shape, on_longest).split_keys);
    }
}

TEST(PagedDecodeSplitPlan, KeySplitsCoverTheContextInWholeTilesNoneEmpty) {
  for (std::int64_t context : {1, 63, 64, 65, 1000, 4099, 16384, 32768})
    for (std::int64_t asked : {1, 2, 3, 4, 5, 7, 33, 64}) {
      const auto a = axes(1, 1, context, 32, 8);
      if (asked > max_splits(a)) continue;
      const KeySplit k = key_split(a, asked);
      SCOPED_TRACE(testing::Message() << "context " << context << ", " << asked << " splits asked");
      EXPECT_EQ(k.split_keys % kTileKeys, 0);
      EXPECT_LE(k.splits, asked);
      EXPECT_GE(k.split_keys * k.splits, context);             // every key in a split
      EXPECT_LT(k.split_keys * (k.splits - 1), context);       // the last split holds a key
    }
}

TEST(PagedDecodeSplitPlan, TheWorkspaceHoldsEveryPartialTheKernelsIndex) {
  // b2 q8 h32/4: 64 query rows a kv head, two row blocks, so the counters are per row block too.
  for (const auto& a : {axes(8, 1, 16384, 32, 8), axes(1, 1, 32768, 32, 8), axes(3, 4, 1000, 16, 4, 64),
                        axes(2, 8, 4096, 32, 4)}) {
    const std::int64_t splits = max_splits(a), out_rows = a.batch * a.q_len * a.heads;
    SCOPED_TRACE(testing::Message() << "batch " << a.batch << " q_len " << a.q_len << " row blocks " << row_blocks(a));
    ASSERT_GT(splits, 1);
    const auto bytes = [](std::int64_t n) { return static_cast<std::size_t>(n); };
    // The sequence order [batch] int32, partial_o [out_rows, splits, D] fp32, partial_lse
    // [out_rows, splits] fp32, then a counter for each (sequence, kv head, row block): each part
    // after the last, 256-aligned.
    EXPECT_GE(partial_o_offset(a), bytes(a.batch * 4));
    EXPECT_GE(partial_lse_offset(a), partial_o_offset(a) + bytes(out_rows * splits * a.head_dim * 4));
    EXPECT_GE(counters_offset(a), partial_lse_offset(a) + bytes(out_rows * splits * 4));
    for (std::size_t offset : {partial_o_offset(a), partial_lse_offset(a), counters_offset(a)}) EXPECT_EQ(offset % 256, 0u);
    EXPECT_GE(counters_bytes(a), bytes(a.batch * a.kv_heads * ((a.group() * a.q_len + 31) / 32) * 4));
    EXPECT_GE(decode_workspace_bytes(a, true), counters_offset(a) + counters_bytes(a));
    EXPECT_GE(decode_workspace_bytes(a, false), bytes(a.batch * 4));  // fused_v1: the order alone
  }
  EXPECT_EQ(row_blocks(axes(2, 8, 4096, 32, 4)), 2);
  const auto one_tile = axes(3, 1, 64, 32, 8);  // never split: the order alone
  EXPECT_EQ(decode_workspace_bytes(one_tile, true), decode_workspace_bytes(one_tile, false));
}

TEST(PagedDecodeSplitPlan, RaggedGridsOfSeveralWavesRunTheLongestSequencesFirst) {
  const auto ragged = PagedDecodeAxes::of(paged_decode::paged_decode_shape(64, 1, 8192, 32, 8, 128, 16, "ragged"));
  const auto equal = PagedDecodeAxes::of(paged_decode::paged_decode_shape(64, 1, 8192, 32, 8, 128, 16, "equal"));
  // b64 h32/8: 512 blocks on an H100's 264 slots; in one wave (or with equal lengths) no order.
  EXPECT_TRUE(takes_longest_first(ragged, 512, 264));
  EXPECT_FALSE(takes_longest_first(ragged, 264, 264));
  EXPECT_FALSE(takes_longest_first(equal, 512, 264));
  const std::vector<std::int32_t> order = longest_first(ragged);
  ASSERT_EQ(order.size(), 64u);
  std::vector<std::int32_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (std::int32_t i = 0; i < 64; ++i) EXPECT_EQ(sorted[static_cast<std::size_t>(i)], i);  // a permutation
  for (std::size_t i = 1; i < order.size(); ++i) EXPECT_GE(ragged.length(order[i - 1]), ragged.length(order[i]));
  EXPECT_EQ(order.front(), 0);  // sequence 0 holds the whole context
}


std::vector<std::int64_t> lengths_of(const PagedDecodeAxes& a) {
  std::vector<std::int64_t> lengths;
  for (std::int64_t b = 0; b < a.batch; ++b) lengths.push_back(a.length(b));
  return lengths;
}

std::int64_t tiles_of(const Piece& p) { return (p.key_end - p.key_begin + kTileKeys - 1) / kTileKeys; }

// What fused_v3's kernel relies on: every key of every sequence in exactly one piece, a
// sequence's pieces consecutive and in key order (so that index, count and first name its partial
// slots), pieces starting on tile boundaries, and runs that differ by at most one tile.
void expect_valid_stream_k(const PagedDecodeAxes& a, const std::vector<std::int64_t>& lengths, std::int64_t asked) {
  const StreamKPlan plan = stream_k_plan(a, lengths, asked);
  std::int64_t tiles = 0;
  for (std::int64_t n : lengths) tiles += (n + kTileKeys - 1) / kTileKeys;
  ASSERT_EQ(plan.workers(), std::max<std::int64_t>(1, std::min({asked, max_workers(a), tiles})));
  ASSERT_LE(static_cast<std::int64_t>(plan.pieces.size()), max_pieces(a));
  ASSERT_EQ(plan.worker_first.front(), 0);
  ASSERT_EQ(plan.worker_first.back(), static_cast<std::int32_t>(plan.pieces.size()));
  std::int64_t fewest = tiles, most = 0;
  for (int w = 0; w < plan.workers(); ++w) {
    std::int64_t run = 0;
    for (std::int32_t i = plan.worker_first[w]; i < plan.worker_first[w + 1]; ++i) run += tiles_of(plan.pieces[i]);
    fewest = std::min(fewest, run);
    most = std::max(most, run);
  }
  EXPECT_LE(most - fewest, 1);
  std::vector<std::int64_t> covered(lengths.size(), 0);  // keys of each sequence covered so far
  for (std::size_t i = 0; i < plan.pieces.size(); ++i) {
    const Piece& p = plan.pieces[i];
    SCOPED_TRACE(testing::Message() << "piece " << i << " of sequence " << p.seq);
    ASSERT_LT(p.seq, static_cast<std::int32_t>(lengths.size()));
    EXPECT_EQ(p.key_begin, covered[p.seq]);  // in key order, no gap, no overlap
    EXPECT_EQ(p.key_begin % kTileKeys, 0);
    EXPECT_GT(p.key_end, p.key_begin);
    EXPECT_LE(p.key_end, lengths[p.seq]);
    covered[p.seq] = p.key_end;
    EXPECT_EQ(static_cast<std::size_t>(p.first + p.index), i);
    EXPECT_LT(p.index, p.count);
    EXPECT_EQ(plan.pieces[p.first].key_begin, 0);
    EXPECT_EQ(plan.pieces[p.first + p.count - 1].key_end, lengths[p.seq]);
  }
  for (std::size_t b = 0; b < lengths.size(); ++b) EXPECT_EQ(covered[b], lengths[b]) << "sequence " << b;
}

TEST(PagedDecodeStreamK, EveryKeyInOnePieceAndEveryRunWithinOneTile) {
  // The ragged default (b16 q4, 33 workers a kv head on an H100), equal lengths, one long
  // sequence, more workers than tiles, the workspace's bound, and random lengths (seeded).
  const auto ragged = PagedDecodeAxes::of(paged_decode::paged_decode_shape(16, 4, 8192, 32, 8, 128, 16, "ragged"));
  expect_valid_stream_k(ragged, lengths_of(ragged), 33);
  expect_valid_stream_k(ragged, lengths_of(ragged), 66);
  const auto equal = axes(8, 1, 16384, 32, 8);
  expect_valid_stream_k(equal, lengths_of(equal), 33);
  expect_valid_stream_k(axes(1, 1, 32768, 32, 8), {32768}, 33);
  expect_valid_stream_k(axes(3, 1, 100, 32, 8), {100, 1, 65}, 264);   // 5 tiles for 264 workers
  expect_valid_stream_k(axes(1, 1, 1 << 20, 1, 1), {1 << 20}, 100000);  // max_workers
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    const std::int64_t batch = 1 + static_cast<std::int64_t>(rng() % 40);
    const auto a = axes(batch, 1, 4096, 32, 8);
    std::vector<std::int64_t> lengths;
    for (std::int64_t b = 0; b < batch; ++b) lengths.push_back(1 + static_cast<std::int64_t>(rng() % 4096));
    SCOPED_TRACE(testing::Message() << "trial " << trial);
    expect_valid_stream_k(a, lengths, 1 + static_cast<std::int64_t>(rng() % 300));
  }
}

TEST(PagedDecodeStreamK, TheRaggedDefaultGetsEqualRunsWhereSplitsLeaveOneLong) {
  // b16 q4 ctx8192 h32/8: 1370 key tiles a kv head; fused_v2's splits of 3392 keys give its
  // longest block 53 tiles, stream-K's 33 runs take 41 or 42 each.
  const auto a = PagedDecodeAxes::of(paged_decode::paged_decode_shape(16, 4, 8192, 32, 8, 128, 16, "ragged"));
  const StreamKPlan plan = stream_k_plan(a, lengths_of(a), 33);
  std::int64_t tiles = 0;
  for (const Piece& p : plan.pieces) tiles += tiles_of(p);
  EXPECT_EQ(tiles, 1370);
  for (int w = 0; w < plan.workers(); ++w) {
    std::int64_t run = 0;
    for (std::int32_t i = plan.worker_first[w]; i < plan.worker_first[w + 1]; ++i) run += tiles_of(plan.pieces[i]);
    EXPECT_TRUE(run == 41 || run == 42) << "worker " << w << ": " << run;
  }
  EXPECT_EQ(plan_split(a, 264).split_keys / kTileKeys, 53);
}

TEST(PagedDecodeStreamK, TheWorkspaceHoldsEveryPieceAndPartialTheKernelIndexes) {
  for (const auto& a : {axes(16, 4, 8192, 32, 8), axes(1, 1, 32768, 32, 8), axes(3, 4, 1000, 16, 4, 64),
                        axes(2, 8, 4096, 32, 4), axes(128, 1, 2048, 32, 8)}) {
    SCOPED_TRACE(testing::Message() << "batch " << a.batch << " q_len " << a.q_len);
    const auto bytes = [](std::int64_t n) { return static_cast<std::size_t>(n); };
    EXPECT_GE(sk_pieces_offset(a), bytes((max_workers(a) + 1) * 4));
    EXPECT_GE(sk_partial_o_offset(a), sk_pieces_offset(a) + bytes(max_pieces(a)) * sizeof(Piece));
    // The kernel's largest slot: (kv block, piece_cap - 1 + ..., last row) < kv blocks x piece_cap x rows.
    const std::int64_t slots = a.kv_heads * row_blocks(a) * max_pieces(a) * tiles_per_block(a) * kRows;
    EXPECT_GE(sk_partial_lse_offset(a), sk_partial_o_offset(a) + bytes(slots * a.head_dim * 4));
    EXPECT_GE(sk_counters_offset(a), sk_partial_lse_offset(a) + bytes(slots * 4));
    for (std::size_t offset : {sk_pieces_offset(a), sk_partial_o_offset(a), sk_partial_lse_offset(a), sk_counters_offset(a)})
      EXPECT_EQ(offset % 256, 0u);
    EXPECT_EQ(stream_k_workspace_bytes(a), sk_counters_offset(a) + counters_bytes(a));
  }
}

}  // namespace
}  // namespace kwb::flash_decode
