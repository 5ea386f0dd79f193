// The change-point rule on synthetic series: seeded noise, a step, a single outlier, short series.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "reports/history/change_points.hpp"

namespace kwb::history {
namespace {

// n medians around `level` with relative gaussian noise, seeded.
std::vector<double> flat(std::uint64_t seed, std::size_t n, double level, double rel_noise) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, rel_noise);
  std::vector<double> out(n);
  for (double& x : out) x = level * (1 + normal(rng));
  return out;
}

std::vector<std::size_t> flagged(const std::vector<TrendStep>& steps) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i].change) out.push_back(i);
  return out;
}

TEST(MedianOf, OddEvenEmpty) {
  EXPECT_DOUBLE_EQ(median_of({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median_of({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median_of({}), 0);
}

TEST(ChangePoints, FlatSeriesWithNoiseHasNone) {
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    const auto series = flat(seed, 40, 40.0, 0.005);
    const auto steps = find_change_points(series);
    EXPECT_TRUE(flagged(steps).empty()) << "seed " << seed;
    EXPECT_TRUE(steps[10].judged);
  }
}

TEST(ChangePoints, TenPercentStepIsFlaggedOnceAtTheStep) {
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    auto series = flat(seed, 30, 40.0, 0.005);
    for (std::size_t i = 20; i < series.size(); ++i) series[i] *= 1.10;
    const auto steps = find_change_points(series);
    ASSERT_EQ(flagged(steps), std::vector<std::size_t>{20}) << "seed " << seed;
    EXPECT_NEAR(steps[20].change_vs_previous, 0.10, 0.03);
    EXPECT_NEAR(steps[20].reference, 40.0, 0.5);
  }
}

TEST(ChangePoints, FasterStepIsFlaggedToo) {
  auto series = flat(7, 20, 40.0, 0.005);
  for (std::size_t i = 10; i < series.size(); ++i) series[i] *= 0.85;
  EXPECT_EQ(flagged(find_change_points(series)), std::vector<std::size_t>{10});
}

// Decision: a lone outlier is flagged at its own run (no rule can tell it from a step yet), and the
// run after it, back at the old level, is not.
TEST(ChangePoints, SingleOutlierIsFlaggedOnlyAtItself) {
  auto series = flat(11, 20, 40.0, 0.005);
  series[12] *= 1.25;
  EXPECT_EQ(flagged(find_change_points(series)), std::vector<std::size_t>{12});
}

TEST(ChangePoints, SmallChangesBelowThreePercentAreNeverFlagged) {
  std::vector<double> series(12, 40.0);  // no noise at all: the 3% floor decides
  series[11] = 40.0 * 1.025;
  EXPECT_TRUE(flagged(find_change_points(series)).empty());
  series[11] = 40.0 * 1.035;
  EXPECT_EQ(flagged(find_change_points(series)), std::vector<std::size_t>{11});
}

TEST(ChangePoints, NoisyHistoryRaisesTheThreshold) {
  // Runs spread by +-4%: the MAD noise is about 6%, so a 10% run is within 3 x noise.
  std::vector<double> series = {40 * 1.04, 40 * 0.96, 40, 40 * 1.04, 40 * 0.96, 40 * 1.10};
  const auto steps = find_change_points(series);
  EXPECT_GT(steps[5].threshold, 0.10);
  EXPECT_FALSE(steps[5].change);
}

TEST(ChangePoints, TooFewRunsAreNotJudged) {
  const std::vector<double> series = {40, 80, 20};
  for (const auto& s : find_change_points(series)) {
    EXPECT_FALSE(s.judged);
    EXPECT_FALSE(s.change);
  }
  EXPECT_NEAR(find_change_points(series)[1].change_vs_previous, 1.0, 1e-12);
  EXPECT_TRUE(find_change_points({}).empty());
}

TEST(ChangePoints, WindowIsTheLastKRuns) {
  // An old level long gone must not be the reference: only the previous 5 runs count.
  std::vector<double> series = {10, 10, 10, 40, 40, 40, 40, 40, 40, 40};
  ChangeRule rule;
  rule.min_relative = 10.0;  // no change points, so the window never restarts
  const auto steps = find_change_points(series, rule);
  EXPECT_DOUBLE_EQ(steps[9].reference, 40);
  EXPECT_DOUBLE_EQ(steps[4].reference, 10);  // previous 4 runs: 10 10 10 40
}

}  // namespace
}  // namespace kwb::history
