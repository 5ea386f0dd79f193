// The block_sparse_attention_fwd oracle on the host: it equals the definition (query i sees key j
// where the mask allows it and block (i / block, j / block) is kept; a row that keeps nothing gives
// O = 0 and lse -inf), density 100 is attention_fwd's oracle to the bit, sampled rows equal the
// whole answer's; the mask's formula keeps the stated share of the visible blocks; the work model
// counts exactly the pairs the definition visits; the edge shapes hold rows that see no key.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "harness/catalogue/registry.hpp"
#include "harness/worker/case_runner_parts.hpp"
#include "reference/attention.hpp"
#include "reference/block_sparse_attention.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace block_sparse_oracle_test {
namespace {

using block_sparse::BlockSparseAxes;

const Op& sparse() { return registered_op(block_sparse::kOp); }
const Op& dense() { return registered_op("attention_fwd"); }

Shape shape(std::int64_t batch, std::int64_t seq, std::int64_t heads, std::int64_t kv_heads, std::int64_t d,
            const char* causal, std::int64_t block, std::int64_t density, const char* softcap = "0") {
  return Shape{{{"batch", batch}, {"seq", seq}, {"heads", heads}, {"kv_heads", kv_heads}, {"head_dim", d},
                {"causal", causal}, {"softcap", softcap}, {"block", block}, {"density", density}}};
}

// Host inputs as a case draws them, the block mask (derived on the device) from the formula.
std::vector<HostTensor> inputs(const Shape& s, std::uint64_t seed) {
  auto in = host_inputs(sparse().tensors(s, DType::bf16), seed);
  const auto a = BlockSparseAxes::of(s);
  const std::int64_t n = a.blocks();
  for (std::int64_t b = 0; b < a.attention.batch; ++b)
    for (std::int64_t h = 0; h < a.attention.heads; ++h)
      for (std::int64_t qb = 0; qb < n; ++qb)
        for (std::int64_t kb = 0; kb < n; ++kb)
          in[3].values[static_cast<std::size_t>(((b * a.attention.heads + h) * n + qb) * n + kb)] =
              a.kept(b, h, qb, kb) ? 1 : 0;
  return in;
}

// Whether query i of (b, h) sees key j: the definition, from the axes alone.
bool sees(const BlockSparseAxes& a, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) {
  return a.attention.mask().visible(i, j, a.attention.seq) && a.kept(b, h, i / a.block, j / a.block);
}

TEST(BlockSparseOracle, EqualsTheDefinitionUnderTheBlockMask) {
  for (const Shape& s : {shape(2, 77, 4, 2, 64, "1", 64, 50), shape(1, 150, 2, 1, 128, "0", 64, 30, "30"),
                         shape(1, 200, 2, 2, 64, "1", 128, 60), shape(1, 100, 2, 1, 64, "0", 64, 0)}) {
    const auto a = BlockSparseAxes::of(s);
    const AttentionAxes& t = a.attention;
    const auto in = inputs(s, 3);
    const auto out = run_oracle(sparse(), s, in);
    const std::int64_t h = t.heads, d = t.head_dim, kvh = t.kv_heads, seq = t.seq;
    std::vector<double> logits(static_cast<std::size_t>(seq));
    for (std::int64_t b = 0; b < t.batch; ++b)
      for (std::int64_t head = 0; head < h; ++head)
        for (std::int64_t i = 0; i < seq; ++i) {
          const double* q = in[0].values.data() + ((b * seq + i) * h + head) * d;
          const double* k = in[1].values.data() + (b * seq * kvh + head / (h / kvh)) * d;
          const double* v = in[2].values.data() + (b * seq * kvh + head / (h / kvh)) * d;
          double max_logit = -INFINITY;
          for (std::int64_t j = 0; j < seq; ++j) {
            if (!sees(a, b, head, i, j)) continue;
            max_logit = std::fmax(max_logit, attention_row_logits(q, k, j, j + 1, d, kvh * d, t.softcap, logits.data()));
          }
          std::vector<double> o(static_cast<std::size_t>(d), 0.0);
          double sum = 0;
          for (std::int64_t j = 0; j < seq; ++j) {
            if (!sees(a, b, head, i, j)) continue;
            const double p = std::exp(logits[static_cast<std::size_t>(j)] - max_logit);
            sum += p;
            for (std::int64_t e = 0; e < d; ++e) o[static_cast<std::size_t>(e)] += p * v[j * kvh * d + e];
          }
          const double lse = out[1].values[static_cast<std::size_t>((b * h + head) * seq + i)];
          if (sum == 0) {
            EXPECT_EQ(lse, -INFINITY) << s.to_compact() << " row " << i;
          } else {
            EXPECT_NEAR(lse, max_logit + std::log(sum), 1e-12) << s.to_compact() << " row " << i;
          }
          for (std::int64_t e = 0; e < d; ++e) {
            const double want = sum == 0 ? 0.0 : o[static_cast<std::size_t>(e)] / sum;
            ASSERT_NEAR(out[0].values[static_cast<std::size_t>(((b * seq + i) * h + head) * d + e)], want, 1e-12)
                << s.to_compact() << " b " << b << " head " << head << " row " << i << " dim " << e;
          }
        }
  }
}

TEST(BlockSparseOracle, DensityHundredIsAttentionFwdToTheBit) {
  for (const char* causal : {"0", "1"}) {
    const Shape s = shape(2, 140, 4, 2, 64, causal, 64, 100, "50");
    const auto in = inputs(s, 5);
    const auto out = run_oracle(sparse(), s, in);
    const Shape plain = attention_shape(2, 140, 4, 2, 64, causal, 0, "50");
    const std::vector<HostTensor> dense_in(in.begin(), in.begin() + 3);
    const auto ref = run_oracle(dense(), plain, dense_in);
    EXPECT_EQ(out[0].values, ref[0].values) << "causal " << causal;
    EXPECT_EQ(out[1].values, ref[1].values) << "causal " << causal;
    EXPECT_EQ(out[0].root_sum_sq, ref[0].root_sum_sq) << "causal " << causal;
  }
}

TEST(BlockSparseOracle, SampledRowsEqualTheWholeAnswersRows) {
  // The verifier hands the positional oracle the sampled rows of q (the sub-shape's seq their
  // count) and k, v and the mask whole; each row's blocks come from its original position.
  const Shape whole = shape(1, 260, 2, 1, 64, "1", 64, 50);
  const auto in = inputs(whole, 8);
  const auto all = run_oracle(sparse(), whole, in);
  const std::vector<std::int64_t> rows = {0, 63, 64, 200, 259};
  const std::int64_t h = 2, d = 64, seq = 260, n = static_cast<std::int64_t>(rows.size());
  std::vector<HostTensor> sub = in;
  sub[0].dims[1] = n;
  sub[0].values.clear();
  for (std::int64_t r : rows)
    for (std::int64_t e = 0; e < h * d; ++e) sub[0].values.push_back(in[0].values[static_cast<std::size_t>(r * h * d + e)]);
  const Shape part_shape = shape(1, n, 2, 1, 64, "1", 64, 50);
  auto part = empty_outputs(sparse().tensors(part_shape, DType::fp32));
  sparse().positional_oracle(part_shape, rows, sub, part);
  for (std::int64_t r = 0; r < n; ++r) {
    for (std::int64_t e = 0; e < h * d; ++e)
      ASSERT_EQ(part[0].values[static_cast<std::size_t>(r * h * d + e)],
                all[0].values[static_cast<std::size_t>(rows[static_cast<std::size_t>(r)] * h * d + e)])
          << "row " << rows[static_cast<std::size_t>(r)];
    for (std::int64_t head = 0; head < h; ++head)
      ASSERT_EQ(part[1].values[static_cast<std::size_t>(head * n + r)],
                all[1].values[static_cast<std::size_t>(head * seq + rows[static_cast<std::size_t>(r)])]);
  }
}

TEST(BlockSparseMask, KeepsTheStatedShareOfTheVisibleBlocksAndNoneAboveTheDiagonal) {
  for (std::int64_t density : {10, 50, 90}) {
    const auto a = BlockSparseAxes::of(shape(4, 8192, 16, 4, 128, "1", 128, density));
    const std::int64_t n = a.blocks();
    std::int64_t kept = 0, visible = 0, above = 0, differs_across_heads = 0;
    for (std::int64_t b = 0; b < 4; ++b)
      for (std::int64_t h = 0; h < 16; ++h)
        for (std::int64_t qb = 0; qb < n; ++qb)
          for (std::int64_t kb = 0; kb < n; ++kb) {
            const bool k = a.kept(b, h, qb, kb);
            if (kb > qb) above += k;
            else {
              ++visible;
              kept += k;
            }
            if (h > 0) differs_across_heads += k != a.kept(b, h - 1, qb, kb);
          }
    EXPECT_EQ(above, 0);
    EXPECT_EQ(kept, a.kept_blocks());
    // 133k visible blocks: the binomial's sigma is under 0.14% of them.
    EXPECT_NEAR(static_cast<double>(kept) / static_cast<double>(visible), density / 100.0, 0.01) << density;
    EXPECT_GT(differs_across_heads, 0);
  }
  // The edges of the range: nothing, and every visible block.
  EXPECT_EQ(BlockSparseAxes::of(shape(2, 1000, 4, 4, 64, "0", 64, 0)).kept_blocks(), 0);
  EXPECT_EQ(BlockSparseAxes::of(shape(2, 1000, 4, 4, 64, "0", 64, 100)).kept_blocks(), 2 * 4 * 16 * 16);
}

TEST(BlockSparseWork, CountsExactlyThePairsTheDefinitionVisits) {
  for (const Shape& s : {shape(2, 450, 3, 1, 64, "1", 192, 60), shape(1, 331, 2, 2, 128, "0", 64, 35),
                         shape(1, 4096, 4, 1, 128, "1", 128, 50)}) {
    const auto a = BlockSparseAxes::of(s);
    double pairs = 0;
    for (std::int64_t b = 0; b < a.attention.batch; ++b)
      for (std::int64_t h = 0; h < a.attention.heads; ++h)
        for (std::int64_t i = 0; i < a.attention.seq; ++i)
          for (std::int64_t j = 0; j < a.attention.seq; ++j) pairs += sees(a, b, h, i, j);
    EXPECT_EQ(a.kept_pairs(), pairs) << s.to_compact();
    EXPECT_EQ(sparse().work(s, DType::bf16).flops, 4.0 * static_cast<double>(a.attention.head_dim) * pairs);
  }
}

TEST(BlockSparseShapes, EdgeShapesHoldRowsThatSeeNoKeyAndRowsThatSeeSome) {
  // "All blocks masked in a row" is an edge every variant must pass: O = 0 and lse = -inf there.
  std::int64_t with_empty_rows = 0, all_empty = 0, mixed = 0;
  for (const Shape& s : sparse().edge_shapes) {
    const auto a = BlockSparseAxes::of(s);
    const std::int64_t empty = a.empty_row_blocks(), rows = a.attention.batch * a.attention.heads * a.blocks();
    with_empty_rows += empty > 0;
    all_empty += empty == rows;
    mixed += empty > 0 && empty < rows;
  }
  EXPECT_GE(all_empty, 1);
  EXPECT_GE(mixed, 3);
  EXPECT_GE(with_empty_rows, 4);
}

TEST(BlockSparseShapes, BadShapesSayWhatAndHowToFix) {
  const Op& op = sparse();
  EXPECT_EQ(op.invalid(shape(4, 4096, 32, 8, 128, "1", 128, 50)), std::nullopt);
  const auto block = op.invalid(shape(1, 1024, 4, 4, 128, "1", 96, 50));
  ASSERT_TRUE(block.has_value());
  EXPECT_NE(block->find("multiple of 64"), std::string::npos) << *block;
  const auto density = op.invalid(shape(1, 1024, 4, 4, 128, "1", 128, 101));
  ASSERT_TRUE(density.has_value());
  EXPECT_NE(density->find("0 to 100"), std::string::npos) << *density;
  // The mask's bound, 2^30 entries: 32768 blocks each way of one head are taken, one more is not
  // (the planner never walks a mask its op refuses: CaseDeviceBytes.AShapeTheOpRefusesIsPlannedButNeverSized).
  EXPECT_EQ(op.invalid(shape(1, 32768 * 64, 1, 1, 128, "1", 64, 50)), std::nullopt);
  const auto huge = op.invalid(shape(1, 32768 * 64 + 1, 1, 1, 128, "1", 64, 50));
  ASSERT_TRUE(huge.has_value());
  EXPECT_NE(huge->find("use a larger block"), std::string::npos) << *huge;
}

TEST(BlockSparseTunables, ATileTheBlockDoesNotDivideIsSkippedWithItsReasonAndTheDefaultFitsTheBlock) {
  // fused_v1's query tile lies in one query block: at 64-token blocks q_tile 128 cannot run. The
  // case is refused before the device (a sweep records a skip), and the default is 64 there.
  const Variant* v1 = nullptr;
  for (const Variant* v : Registry::instance().variants(block_sparse::kOp, false))
    if (v->name == "fused_v1_fa2_mma_cp_async_block_sparse") v1 = v;
  ASSERT_NE(v1, nullptr);
  for (std::int64_t block : {64, 128, 192}) {
    const Shape s = shape(1, 1024, 4, 2, 128, "1", block, 50);
    CaseRequest req{.op = block_sparse::kOp, .variant = v1->name, .dtype = DType::bf16, .shape = s};
    req.tunables = default_tunables(*v1, s, DType::bf16);
    EXPECT_EQ(case_runner_detail::refusal(sparse(), *v1, req), std::nullopt) << "default at block " << block;
    for (auto& [name, value] : req.tunables)
      if (name == "q_tile") {
        EXPECT_EQ(value, block % 128 == 0 ? 128 : 64) << block;
        value = 128;
      }
    const auto why = case_runner_detail::refusal(sparse(), *v1, req);
    if (block % 128 == 0) {
      EXPECT_EQ(why, std::nullopt) << block;
    } else {
      ASSERT_TRUE(why.has_value()) << block;
      EXPECT_NE(why->find("q_tile 128 does not divide the mask's block of " + std::to_string(block)), std::string::npos)
          << *why;
    }
  }
}

}  // namespace
}  // namespace block_sparse_oracle_test
}  // namespace kwb
