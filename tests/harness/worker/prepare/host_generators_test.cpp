// The host-side parts of the generators: offsets (cu_seqlens), permutations, and the shared
// per-element draws the device uses for labels, position ids and masks.
#include "harness/worker/prepare/host_generators.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "harness/worker/prepare/draws.hpp"

namespace kwb {
namespace {

TEST(Offsets, StartAtZeroEndAtTotalAndStrictlyIncrease) {
  for (std::uint64_t seed : {1u, 2u, 99u})
    for (auto [count, total] : {std::pair<std::int64_t, std::int64_t>{2, 1}, {9, 8}, {9, 1000},
                                {257, 65536}, {4097, 4096 * 37}}) {
      const auto o = random_offsets(count, total, draws::fill_key(seed, 7));
      ASSERT_EQ(static_cast<std::int64_t>(o.size()), count);
      EXPECT_EQ(o.front(), 0);
      EXPECT_EQ(o.back(), total);
      for (std::size_t i = 1; i < o.size(); ++i) ASSERT_LT(o[i - 1], o[i]) << "count " << count << " at " << i;
    }
}

TEST(Offsets, LengthsAreRandomAndDeterministicPerSeed) {
  const auto a = random_offsets(65, 10000, draws::fill_key(5, 1));
  const auto b = random_offsets(65, 10000, draws::fill_key(5, 1));
  const auto c = random_offsets(65, 10000, draws::fill_key(6, 1));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::set<std::int64_t> lengths;
  for (std::size_t i = 1; i < a.size(); ++i) lengths.insert(a[i] - a[i - 1]);
  EXPECT_GT(lengths.size(), 20u) << "segment lengths must vary, not be an even split";
}

TEST(Offsets, ImpossibleSplitIsRefusedWithTheNumbers) {
  try {
    random_offsets(10, 5, 1);
    FAIL() << "expected a refusal";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("total of 5 into 9"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(distribution_problem(Distribution::offsets(5), ElemType::int32, 10).has_value());
  EXPECT_FALSE(distribution_problem(Distribution::offsets(9), ElemType::int32, 10).has_value());
}

TEST(Permutation, IsAPermutationAndDependsOnTheSeed) {
  for (std::int64_t n : {1, 2, 17, 100000}) {
    auto p = random_permutation(n, draws::fill_key(3, 0));
    auto sorted = p;
    std::sort(sorted.begin(), sorted.end());
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(sorted[i], i) << "n " << n;
    if (n >= 17) {
      std::int64_t fixed = 0;
      for (std::int64_t i = 0; i < n; ++i) fixed += p[i] == i;
      EXPECT_LT(fixed, n / 4 + 2) << "a shuffle leaves few fixed points";
      EXPECT_NE(p, random_permutation(n, draws::fill_key(4, 0)));
    }
  }
}

TEST(DoublyStochastic, RowsAndColumnsSumToOneAndBlocksDiffer) {
  const std::int64_t n = 4, blocks = 300;
  const auto m = random_doubly_stochastic(blocks * n * n, n, draws::fill_key(9, 3));
  double max_entry = 0;
  for (std::int64_t b = 0; b < blocks; ++b) {
    const double* block = m.data() + b * n * n;
    for (std::int64_t i = 0; i < n; ++i) {
      double row = 0, col = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        ASSERT_GE(block[i * n + j], 0.0);
        row += block[i * n + j];
        col += block[j * n + i];
        max_entry = std::max(max_entry, block[i * n + j]);
      }
      ASSERT_NEAR(row, 1.0, 1e-12) << "block " << b << " row " << i;
      ASSERT_NEAR(col, 1.0, 1e-12) << "block " << b << " column " << i;
    }
    if (b > 0) EXPECT_NE(block[0], block[-n * n]) << "each block has its own mixture";
  }
  EXPECT_GT(max_entry, 0.3) << "mixtures are not all near the uniform matrix";
  EXPECT_EQ(m, random_doubly_stochastic(blocks * n * n, n, draws::fill_key(9, 3)));
  EXPECT_TRUE(distribution_problem(Distribution::doubly_stochastic(4), ElemType::int32, 16).has_value());
  EXPECT_TRUE(distribution_problem(Distribution::doubly_stochastic(4), ElemType::fp32, 15).has_value());
  EXPECT_FALSE(distribution_problem(Distribution::doubly_stochastic(4), ElemType::fp32, 32).has_value());
}

TEST(Labels, IgnoreFractionIsHonouredAndTheRestLieInRange) {
  const std::uint64_t key = draws::fill_key(11, 2);
  const std::int64_t n = 200000, vocab = 32000;
  std::int64_t ignored = 0;
  std::set<std::int64_t> seen;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t v = draws::integer(key, i, 0, vocab, 0.1, -100);
    if (v == -100) {
      ++ignored;
      continue;
    }
    ASSERT_GE(v, 0);
    ASSERT_LT(v, vocab);
    seen.insert(v);
  }
  EXPECT_NEAR(static_cast<double>(ignored) / n, 0.1, 0.005);
  EXPECT_GT(seen.size(), 30000u) << "labels cover the vocabulary";
  // No ignore fraction: nothing ignored.
  for (std::int64_t i = 0; i < 10000; ++i) ASSERT_NE(draws::integer(key, i, 0, vocab, 0.0, -100), -100);
}

TEST(PositionIds, CountUpWithinEachSequenceFromASeededStart) {
  const std::uint64_t key = draws::fill_key(8, 1);
  const std::int64_t period = 50, max_start = 1000;
  std::set<std::int64_t> starts;
  for (std::int64_t seq = 0; seq < 40; ++seq) {
    const std::int64_t start = draws::position_id(key, seq * period, period, max_start);
    ASSERT_GE(start, 0);
    ASSERT_LE(start, max_start);
    starts.insert(start);
    for (std::int64_t j = 0; j < period; ++j)
      ASSERT_EQ(draws::position_id(key, seq * period + j, period, max_start), start + j);
  }
  EXPECT_GT(starts.size(), 30u);
  EXPECT_EQ(draws::position_id(key, 123, period, 0), 123 % period);
}

TEST(Mask, TrueFractionIsHonoured) {
  const std::uint64_t key = draws::fill_key(9, 9);
  for (double fraction : {0.05, 0.5, 0.9}) {
    std::int64_t ones = 0;
    for (std::int64_t i = 0; i < 100000; ++i) ones += draws::mask(key, i, fraction);
    EXPECT_NEAR(ones / 100000.0, fraction, 0.01);
  }
}

TEST(DistributionProblem, MismatchedElementTypesAndRangesAreNamed) {
  EXPECT_NE(distribution_problem(Distribution::normal(0, 1), ElemType::int32, 4)->find("floating"),
            std::string::npos);
  EXPECT_NE(distribution_problem(Distribution::integers(0, 10), ElemType::bf16, 4)->find("int32 or int64"),
            std::string::npos);
  EXPECT_NE(distribution_problem(Distribution::integers(0, 10, 1.5), ElemType::int32, 4)->find("ignore_fraction"),
            std::string::npos);
  EXPECT_NE(distribution_problem(Distribution::integers(0, std::int64_t{1} << 40), ElemType::int32, 4)->find("int64"),
            std::string::npos);
  EXPECT_TRUE(distribution_problem(Distribution::position_ids(0), ElemType::int64, 4).has_value());
  EXPECT_TRUE(distribution_problem(Distribution::mask(2.0), ElemType::boolean, 4).has_value());
  EXPECT_FALSE(distribution_problem(Distribution::mask(0.5), ElemType::boolean, 4).has_value());
  EXPECT_FALSE(distribution_problem(Distribution::permutation(), ElemType::int64, 4).has_value());
  EXPECT_FALSE(distribution_problem(Distribution::uniform(0.5, 1.5), ElemType::fp32, 4).has_value());
}

}  // namespace
}  // namespace kwb
