// The verdict on synthetic, seeded sample distributions: identical, shifted within and beyond the
// threshold, bimodal and noisy, too few samples, and changes under the minimum effect.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "reports/compare/decision.hpp"
#include "harness/record/stats.hpp"
#include "tests/reports/compare/compare_test_support.hpp"

namespace kwb {
namespace {

using test::bimodal_samples;
using test::noisy_samples;
using test::scaled;

std::string describe(const Decision& d) {
  return std::string(to_string(d.verdict)) + ": " + d.reason;
}

TEST(CompareDecision, IdenticalDistributionsAreSame) {
  const auto base = noisy_samples(1, 200, 100.0, 0.01);
  const auto next = noisy_samples(2, 200, 100.0, 0.01);  // same distribution, other draws
  const Decision d = decide(base, next, DecisionSettings{});
  EXPECT_EQ(d.verdict, Verdict::same) << describe(d);
  EXPECT_GT(d.ratio.lo, 0.97);
  EXPECT_LT(d.ratio.hi, 1.03);
  EXPECT_LE(d.ratio.lo, d.ratio.ratio);
  EXPECT_GE(d.ratio.hi, d.ratio.ratio);
}

TEST(CompareDecision, OnePercentShiftUnderAThreePercentThresholdIsSame) {
  const auto base = noisy_samples(3, 200, 100.0, 0.01);
  const auto next = scaled(noisy_samples(4, 200, 100.0, 0.01), 1.01);
  const Decision d = decide(base, next, DecisionSettings{});
  EXPECT_EQ(d.verdict, Verdict::same) << describe(d);
  EXPECT_NEAR(d.ratio.ratio, 1.01, 0.005);
  // The shift is real (the U test sees it) but under the threshold: a verdict, not an alarm.
  EXPECT_LT(d.p_value, 0.01);
}

TEST(CompareDecision, FivePercentSlowerIsSlowerAndFasterTheOtherWay) {
  const auto base = noisy_samples(5, 200, 100.0, 0.01);
  const auto next = scaled(noisy_samples(6, 200, 100.0, 0.01), 1.05);
  const Decision slower = decide(base, next, DecisionSettings{});
  EXPECT_EQ(slower.verdict, Verdict::slower) << describe(slower);
  EXPECT_GT(slower.ratio.lo, 1.03);
  EXPECT_LT(slower.p_value, 1e-6);
  const Decision faster = decide(next, base, DecisionSettings{});
  EXPECT_EQ(faster.verdict, Verdict::faster) << describe(faster);
  EXPECT_LT(faster.ratio.hi, 0.97);
}

TEST(CompareDecision, ThresholdDecidesWhetherFivePercentCounts) {
  const auto base = noisy_samples(7, 200, 100.0, 0.01);
  const auto next = scaled(noisy_samples(8, 200, 100.0, 0.01), 1.05);
  DecisionSettings loose;
  loose.threshold = 0.10;
  EXPECT_EQ(decide(base, next, loose).verdict, Verdict::same);
  DecisionSettings edge;
  edge.threshold = 0.05;  // the interval straddles 1.05: neither inside nor above
  EXPECT_EQ(decide(base, next, edge).verdict, Verdict::ambiguous);
}

TEST(CompareDecision, BimodalDistributionsAreAmbiguous) {
  // Both sides flip between 100 and 110 us half the time: the median sits in the gap and a
  // resample's median can land on either mode.
  const auto base = bimodal_samples(9, 40, 100.0, 110.0);
  const auto next = bimodal_samples(10, 40, 100.0, 110.0);
  const Decision d = decide(base, next, DecisionSettings{});
  EXPECT_EQ(d.verdict, Verdict::ambiguous) << describe(d);
  EXPECT_NE(d.reason.find("crosses"), std::string::npos) << d.reason;
}

TEST(CompareDecision, HighNoiseWithFewSamplesIsAmbiguous) {
  const auto base = noisy_samples(11, 12, 100.0, 0.3);
  const auto next = noisy_samples(12, 12, 100.0, 0.3);
  const Decision d = decide(base, next, DecisionSettings{});
  EXPECT_EQ(d.verdict, Verdict::ambiguous) << describe(d);
  EXPECT_GT(d.ratio.hi - d.ratio.lo, 0.06);
}

TEST(CompareDecision, TooFewSamplesIsAmbiguousWithTheReason) {
  const auto base = noisy_samples(13, 200, 100.0, 0.01);
  const auto next = scaled(noisy_samples(14, 3, 100.0, 0.01), 1.5);  // clearly slower, but 3 samples
  const Decision d = decide(base, next, DecisionSettings{});
  EXPECT_EQ(d.verdict, Verdict::ambiguous);
  EXPECT_NE(d.reason.find("too few samples"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("NEW has 3"), std::string::npos) << d.reason;
  EXPECT_NEAR(d.ratio.ratio, 1.5, 0.05);  // the ratio of medians is still shown
}

TEST(CompareDecision, ChangeUnderTheMinimumEffectIsSame) {
  // 10% of a 2 us kernel is 0.2 us, under the 0.5 us resolution of the timer.
  const auto base = noisy_samples(15, 200, 2.0, 0.005);
  const auto next = scaled(noisy_samples(16, 200, 2.0, 0.005), 1.10);
  const Decision d = decide(base, next, DecisionSettings{});
  EXPECT_EQ(d.verdict, Verdict::same) << describe(d);
  EXPECT_DOUBLE_EQ(d.tolerance, 0.5 / d.base_median_us);  // the band widened from 3% to ~25%
  EXPECT_NEAR(d.tolerance, 0.25, 1e-3);
  EXPECT_NE(d.reason.find("minimum effect"), std::string::npos) << d.reason;
  DecisionSettings fine;
  fine.min_effect_us = 0;
  EXPECT_EQ(decide(base, next, fine).verdict, Verdict::slower);
}

TEST(CompareDecision, SameInputsGiveTheSameIntervalEveryTime) {
  const auto base = noisy_samples(17, 100, 50.0, 0.02);
  const auto next = noisy_samples(18, 101, 51.0, 0.02);
  const Decision a = decide(base, next, DecisionSettings{});
  const Decision b = decide(base, next, DecisionSettings{});
  EXPECT_EQ(a.ratio.lo, b.ratio.lo);
  EXPECT_EQ(a.ratio.hi, b.ratio.hi);
  EXPECT_EQ(a.p_value, b.p_value);
  DecisionSettings other;
  other.seed = 12345;
  const Decision c = decide(base, next, other);
  EXPECT_TRUE(c.ratio.lo != a.ratio.lo || c.ratio.hi != a.ratio.hi) << "the seed must drive the resamples";
}

TEST(CompareDecision, RunToRunSpreadWiderThanTheThresholdWidensTheBandAndSaysSo) {
  // 5% slower within one run, but other runs of BASE's build landed up to 7% away from its median.
  const auto base = noisy_samples(21, 200, 100.0, 0.01);
  const auto next = scaled(noisy_samples(22, 200, 100.0, 0.01), 1.05);
  ASSERT_EQ(decide(base, next, DecisionSettings{}).verdict, Verdict::slower);
  DecisionSettings spread;
  spread.run_spread = 0.07;
  spread.spread_runs = 2;
  const Decision d = decide(base, next, spread);
  EXPECT_EQ(d.verdict, Verdict::same) << describe(d);
  EXPECT_DOUBLE_EQ(d.tolerance, 0.07);
  EXPECT_TRUE(d.band_from_spread);
  EXPECT_NE(d.reason.find("+-7% (the run-to-run spread of BASE's median over 2 other runs"), std::string::npos)
      << d.reason;
}

TEST(CompareDecision, RunToRunSpreadUnderTheThresholdOrMinEffectChangesNothing) {
  const auto base = noisy_samples(23, 200, 100.0, 0.01);
  const auto next = scaled(noisy_samples(24, 200, 100.0, 0.01), 1.05);
  DecisionSettings small;
  small.run_spread = 0.01;
  small.spread_runs = 1;
  const Decision d = decide(base, next, small);
  EXPECT_EQ(d.verdict, Verdict::slower) << describe(d);
  EXPECT_DOUBLE_EQ(d.tolerance, 0.03);
  EXPECT_FALSE(d.band_from_spread);
  EXPECT_EQ(d.reason.find("run-to-run"), std::string::npos) << d.reason;
  // A 2 us kernel: the 0.5 us minimum effect (25%) sets the band, not a 10% spread.
  const auto tiny = noisy_samples(25, 200, 2.0, 0.005);
  DecisionSettings spread;
  spread.run_spread = 0.10;
  spread.spread_runs = 1;
  const Decision t = decide(tiny, tiny, spread);
  EXPECT_NEAR(t.tolerance, 0.25, 1e-3);
  EXPECT_FALSE(t.band_from_spread);
  EXPECT_NE(t.reason.find("minimum effect"), std::string::npos) << t.reason;
}

// The plain bootstrap: draw n values with replacement, take the median.
RatioInterval naive_bootstrap(const std::vector<double>& base, const std::vector<double>& next, int resamples) {
  std::mt19937_64 rng(99);
  auto median_of_resample = [&](const std::vector<double>& v) {
    std::uniform_int_distribution<std::size_t> pick(0, v.size() - 1);
    std::vector<double> r(v.size());
    for (double& x : r) x = v[pick(rng)];
    std::sort(r.begin(), r.end());
    return quantile_sorted(r, 0.5);
  };
  std::vector<double> ratios;
  for (int i = 0; i < resamples; ++i) {
    const double b = median_of_resample(base);
    ratios.push_back(median_of_resample(next) / b);
  }
  std::sort(ratios.begin(), ratios.end());
  return {median_of(next) / median_of(base), quantile_sorted(ratios, 0.025), quantile_sorted(ratios, 0.975)};
}

TEST(CompareDecision, ExactMedianDrawsAgreeWithThePlainBootstrap) {
  // Odd and even sizes, skewed samples: the interval must match resampling value by value.
  for (auto [nb, nn] : {std::pair{51, 50}, std::pair{40, 41}}) {
    SCOPED_TRACE(testing::Message() << nb << " vs " << nn << " samples");
    auto base = noisy_samples(19, nb, 100.0, 0.05);
    auto next = noisy_samples(20, nn, 104.0, 0.05);
    for (double& x : next) x = x * x / 104.0;  // skew
    const RatioInterval fast = bootstrap_ratio_of_medians(base, next, 20000, 0.95, 7);
    const RatioInterval slow = naive_bootstrap(base, next, 20000);
    EXPECT_DOUBLE_EQ(fast.ratio, slow.ratio);
    EXPECT_NEAR(fast.lo, slow.lo, 0.004);
    EXPECT_NEAR(fast.hi, slow.hi, 0.004);
    EXPECT_GT(fast.hi - fast.lo, 0.01);
  }
}

TEST(CompareDecision, MannWhitneyMatchesTheTextbookValue) {
  // Complete separation of 5 and 5: U = 0, z = (12.5 - 0.5) / sqrt(25 * 11 / 12), p = 0.01219
  // (scipy.stats.mannwhitneyu(..., method="asymptotic")).
  const std::vector<double> a = {1, 2, 3, 4, 5}, b = {6, 7, 8, 9, 10};
  EXPECT_NEAR(mann_whitney_p(a, b), 0.012186, 1e-5);
  EXPECT_DOUBLE_EQ(mann_whitney_p(a, b), mann_whitney_p(b, a));
  // Ties share their mean rank and shrink the variance.
  const std::vector<double> c = {1, 2, 2, 3}, d = {2, 3, 3, 4};
  // Combined sorted: 1 | 2 2 2 | 3 3 3 | 4 -> ranks 1 | 3 3 3 | 6 6 6 | 8. R(c) = 1 + 3 + 3 + 6 = 13,
  // U = 13 - 10 = 3, mean 8, tie term 2 * (27 - 3) = 48, var = 16/12 * (9 - 48/56) = 10.857,
  // z = (5 - 0.5) / 3.2950 = 1.3657, p = 0.17203.
  EXPECT_NEAR(mann_whitney_p(c, d), 0.17203, 1e-4);
  const std::vector<double> flat = {3, 3, 3};
  EXPECT_EQ(mann_whitney_p(flat, flat), 1.0);
}

}  // namespace
}  // namespace kwb
