// Quantiles, summaries and the stopping rule, checked against values worked out by hand.
#include "harness/record/stats.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace kwb {
namespace {

constexpr double kTolerance = 1e-12;

TEST(QuantileSorted, MatchesNumpyDocumentedMedian) {
  // numpy's documentation: np.quantile([[10, 7, 4], [3, 2, 1]], 0.5) == 3.5
  const std::vector<double> sorted = {1, 2, 3, 4, 7, 10};
  EXPECT_NEAR(quantile_sorted(sorted, 0.5), 3.5, kTolerance);
}

TEST(QuantileSorted, InterpolatesLinearlyBetweenNeighbouringRanks) {
  // np.quantile(np.arange(1, 11), [0.1, 0.25, 0.75, 0.9]) == [1.9, 3.25, 7.75, 9.1]
  const std::vector<double> sorted = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_NEAR(quantile_sorted(sorted, 0.1), 1.9, kTolerance);
  EXPECT_NEAR(quantile_sorted(sorted, 0.25), 3.25, kTolerance);
  EXPECT_NEAR(quantile_sorted(sorted, 0.75), 7.75, kTolerance);
  EXPECT_NEAR(quantile_sorted(sorted, 0.9), 9.1, kTolerance);
}

TEST(QuantileSorted, UsesUnevenGapsBetweenValues) {
  // rank h = 4 * 0.33 = 1.32: 20 + 0.32 * (30 - 20); np.quantile([10, 20, 30, 40, 50], 0.33) == 23.2
  const std::vector<double> sorted = {10, 20, 30, 40, 50};
  EXPECT_NEAR(quantile_sorted(sorted, 0.33), 23.2, kTolerance);
  // rank 1.5 across the gap 2 -> 10: 2 + 0.5 * 8
  const std::vector<double> skewed = {1, 2, 10};
  EXPECT_NEAR(quantile_sorted(skewed, 0.75), 6.0, kTolerance);
}

TEST(QuantileSorted, EndpointsAreMinAndMax) {
  const std::vector<double> sorted = {-3, 0.5, 8, 11};
  EXPECT_DOUBLE_EQ(quantile_sorted(sorted, 0.0), -3);
  EXPECT_DOUBLE_EQ(quantile_sorted(sorted, 1.0), 11);
}

TEST(QuantileSorted, SingleValueIsEveryQuantile) {
  const std::vector<double> one = {4.25};
  for (double q : {0.0, 0.1, 0.5, 0.9, 1.0}) EXPECT_DOUBLE_EQ(quantile_sorted(one, q), 4.25) << q;
}

TEST(Summarize, MedianOfEvenCountInterpolates) {
  const std::vector<double> samples = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(summarize(samples).median, 2.5);
}

TEST(Summarize, KnownUnsortedSetGivesHandComputedFields) {
  // Sorted: 2 4 4 4 5 5 7 9 (n = 8, mean 5, squared deviations sum to 32).
  const std::vector<double> samples = {9, 2, 5, 4, 7, 4, 5, 4};
  const SummaryStats s = summarize(samples);
  EXPECT_EQ(s.count, 8);
  EXPECT_NEAR(s.median, 4.5, kTolerance);  // rank 3.5: 4 + 0.5 * 1
  EXPECT_NEAR(s.p10, 3.4, kTolerance);     // rank 0.7: 2 + 0.7 * 2
  EXPECT_NEAR(s.p90, 7.6, kTolerance);     // rank 6.3: 7 + 0.3 * 2
  EXPECT_DOUBLE_EQ(s.min, 2);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_DOUBLE_EQ(s.mean, 5);
}

TEST(Summarize, StdevUsesSampleDenominator) {
  // Population stdev of this classic set is exactly 2; the sample stdev is sqrt(32 / 7).
  const std::vector<double> samples = {2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_NEAR(summarize(samples).stdev, std::sqrt(32.0 / 7.0), kTolerance);
}

TEST(Summarize, StdevKeepsSmallSpreadOnLargeCommonValue) {
  // 1e9 +- 1: a one-pass sum-of-squares formula loses this spread to cancellation.
  const std::vector<double> samples = {1e9 - 1, 1e9, 1e9 + 1};
  EXPECT_NEAR(summarize(samples).stdev, 1.0, 1e-9);
}

TEST(Summarize, NoiseIsInterquartileRangeOverMedian) {
  // Sorted 2 4 4 4 5 5 7 9: p25 (rank 1.75) = 4, p75 (rank 5.25) = 5.5, median 4.5.
  const std::vector<double> samples = {2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_NEAR(summarize(samples).noise, (5.5 - 4.0) / 4.5, kTolerance);
}

TEST(Summarize, NoiseIgnoresSingleOutlierThatInflatesStdev) {
  const std::vector<double> samples = {1, 1, 1, 1, 1, 1, 1, 1, 1, 100};
  const SummaryStats s = summarize(samples);
  EXPECT_DOUBLE_EQ(s.noise, 0);
  EXPECT_GT(s.stdev, 30);
  EXPECT_DOUBLE_EQ(s.max, 100);
}

TEST(Summarize, NoiseIsZeroWhenMedianIsZero) {
  const std::vector<double> samples = {-1, 0, 1};
  const SummaryStats s = summarize(samples);
  EXPECT_DOUBLE_EQ(s.median, 0);
  EXPECT_DOUBLE_EQ(s.noise, 0);
}

TEST(Summarize, SingleSampleHasZeroStdevAndNoise) {
  const std::vector<double> samples = {3.5};
  const SummaryStats s = summarize(samples);
  EXPECT_EQ(s.count, 1);
  EXPECT_DOUBLE_EQ(s.median, 3.5);
  EXPECT_DOUBLE_EQ(s.p10, 3.5);
  EXPECT_DOUBLE_EQ(s.p90, 3.5);
  EXPECT_DOUBLE_EQ(s.min, 3.5);
  EXPECT_DOUBLE_EQ(s.max, 3.5);
  EXPECT_DOUBLE_EQ(s.mean, 3.5);
  EXPECT_DOUBLE_EQ(s.stdev, 0);
  EXPECT_DOUBLE_EQ(s.noise, 0);
}

TEST(Summarize, EmptyInputGivesCountZeroAndZeros) {
  const SummaryStats s = summarize(std::span<const double>{});
  EXPECT_EQ(s.count, 0);
  EXPECT_DOUBLE_EQ(s.median, 0);
  EXPECT_DOUBLE_EQ(s.p10, 0);
  EXPECT_DOUBLE_EQ(s.p90, 0);
  EXPECT_DOUBLE_EQ(s.min, 0);
  EXPECT_DOUBLE_EQ(s.max, 0);
  EXPECT_DOUBLE_EQ(s.mean, 0);
  EXPECT_DOUBLE_EQ(s.stdev, 0);
  EXPECT_DOUBLE_EQ(s.noise, 0);
}

TEST(StopReasonText, RoundTripsEveryReason) {
  for (StopReason r : {StopReason::converged, StopReason::time_limit, StopReason::max_samples}) {
    EXPECT_EQ(parse_stop_reason(to_string(r)), r) << to_string(r);
  }
  EXPECT_EQ(to_string(StopReason::converged), "converged");
  EXPECT_EQ(to_string(StopReason::time_limit), "time_limit");
  EXPECT_EQ(to_string(StopReason::max_samples), "max_samples");
}

TEST(StopReasonText, UnknownTextParsesToNullopt) {
  EXPECT_EQ(parse_stop_reason("timeout"), std::nullopt);
  EXPECT_EQ(parse_stop_reason(""), std::nullopt);
  EXPECT_EQ(parse_stop_reason("Converged"), std::nullopt);
}

TEST(StoppingPreset, AllThreeExistAndCarryTheirName) {
  for (const char* name : {"quick", "default", "precise"}) {
    const auto rule = stopping_preset(name);
    ASSERT_TRUE(rule.has_value()) << name;
    EXPECT_EQ(rule->preset, name);
  }
}

TEST(StoppingPreset, QuickIsLessStrictThanDefaultThanPrecise) {
  const StoppingRule quick = *stopping_preset("quick");
  const StoppingRule normal = *stopping_preset("default");
  const StoppingRule precise = *stopping_preset("precise");
  EXPECT_LT(quick.min_samples, normal.min_samples);
  EXPECT_LT(normal.min_samples, precise.min_samples);
  EXPECT_LT(quick.min_time_ms, normal.min_time_ms);
  EXPECT_LT(normal.min_time_ms, precise.min_time_ms);
  EXPECT_GT(quick.target_noise, normal.target_noise);
  EXPECT_GT(normal.target_noise, precise.target_noise);
  EXPECT_LT(quick.max_time_ms, normal.max_time_ms);
  EXPECT_LT(normal.max_time_ms, precise.max_time_ms);
  EXPECT_LT(quick.max_samples, normal.max_samples);
  EXPECT_LT(normal.max_samples, precise.max_samples);
  EXPECT_LT(quick.warmup_ms, normal.warmup_ms);
  EXPECT_LT(normal.warmup_ms, precise.warmup_ms);
}

TEST(StoppingPreset, EachPresetLeavesRoomToConvergeBeforeItsLimits) {
  for (const char* name : {"quick", "default", "precise"}) {
    const StoppingRule rule = *stopping_preset(name);
    EXPECT_LT(rule.min_time_ms, rule.max_time_ms) << name;
    EXPECT_LT(rule.min_samples, rule.max_samples) << name;
  }
}

TEST(StoppingPreset, DefaultMatchesDefaultConstructedRule) {
  const StoppingRule preset = *stopping_preset("default");
  const StoppingRule constructed;
  EXPECT_EQ(preset.preset, constructed.preset);
  EXPECT_EQ(preset.min_samples, constructed.min_samples);
  EXPECT_DOUBLE_EQ(preset.min_time_ms, constructed.min_time_ms);
  EXPECT_DOUBLE_EQ(preset.target_noise, constructed.target_noise);
  EXPECT_DOUBLE_EQ(preset.max_time_ms, constructed.max_time_ms);
  EXPECT_EQ(preset.max_samples, constructed.max_samples);
  EXPECT_DOUBLE_EQ(preset.warmup_ms, constructed.warmup_ms);
}

TEST(StoppingPreset, QuickHasDocumentedValues) {
  const StoppingRule quick = *stopping_preset("quick");
  EXPECT_EQ(quick.min_samples, 10);
  EXPECT_DOUBLE_EQ(quick.min_time_ms, 20);
  EXPECT_DOUBLE_EQ(quick.target_noise, 0.05);
  EXPECT_DOUBLE_EQ(quick.max_time_ms, 400);
  EXPECT_EQ(quick.max_samples, 2000);
  EXPECT_DOUBLE_EQ(quick.warmup_ms, 30);
}

TEST(StoppingPreset, PreciseHasDocumentedValues) {
  const StoppingRule precise = *stopping_preset("precise");
  EXPECT_EQ(precise.min_samples, 100);
  EXPECT_DOUBLE_EQ(precise.min_time_ms, 500);
  EXPECT_DOUBLE_EQ(precise.target_noise, 0.005);
  EXPECT_DOUBLE_EQ(precise.max_time_ms, 10000);
  EXPECT_EQ(precise.max_samples, 100000);
  EXPECT_DOUBLE_EQ(precise.warmup_ms, 300);
}

TEST(StoppingPreset, UnknownNameGivesNullopt) {
  EXPECT_FALSE(stopping_preset("fast").has_value());
  EXPECT_FALSE(stopping_preset("").has_value());
  EXPECT_FALSE(stopping_preset("Quick").has_value());
}

// A small rule so the synthetic sample sets stay short.
StoppingRule small_rule() {
  StoppingRule rule;
  rule.preset = "test";
  rule.min_samples = 10;
  rule.min_time_ms = 100;
  rule.target_noise = 0.02;
  rule.max_time_ms = 1000;
  rule.max_samples = 50;
  return rule;
}

std::vector<double> steady(std::size_t n) {
  std::vector<double> samples;
  for (std::size_t i = 0; i < n; ++i) samples.push_back(1.0 + 0.001 * static_cast<double>(i % 3));
  return samples;
}

std::vector<double> alternating(std::size_t n) {
  std::vector<double> samples;
  for (std::size_t i = 0; i < n; ++i) samples.push_back(i % 2 == 0 ? 1.0 : 1.5);
  return samples;
}

// The rule applied after every sample until it stops: sample(i) is the i-th sample, each taking
// `ms_per_sample` of wall time.
struct Stopped {
  std::vector<double> samples;
  double elapsed_ms = 0;
  StopReason reason = StopReason::converged;
};
template <class SampleFn>
Stopped run_until_stop(const StoppingRule& rule, SampleFn sample, double ms_per_sample) {
  Stopped out;
  std::optional<StopReason> reason;
  while (!reason) {
    out.samples.push_back(sample(out.samples.size()));
    out.elapsed_ms += ms_per_sample;
    reason = should_stop(rule, out.samples, out.elapsed_ms);
  }
  out.reason = *reason;
  return out;
}

TEST(ShouldStop, ConvergesWhenSamplesTimeAndNoiseAllMeetTheRule) {
  EXPECT_EQ(should_stop(small_rule(), steady(10), 100.0), StopReason::converged);
}

TEST(ShouldStop, KeepsGoingWithTooFewSamples) {
  EXPECT_EQ(should_stop(small_rule(), steady(9), 500.0), std::nullopt);
}

TEST(ShouldStop, KeepsGoingBeforeMinimumTime) {
  EXPECT_EQ(should_stop(small_rule(), steady(40), 99.0), std::nullopt);
}

TEST(ShouldStop, KeepsGoingWhileNoiseIsAboveTarget) {
  // Alternating 1.0 / 1.5: p25 1.0, p75 1.5, median 1.25 -> noise 0.4.
  EXPECT_EQ(should_stop(small_rule(), alternating(20), 500.0), std::nullopt);
}

TEST(ShouldStop, NoiseEqualToTargetConverges) {
  StoppingRule rule = small_rule();
  rule.target_noise = 0;
  const std::vector<double> identical(10, 2.0);
  EXPECT_EQ(should_stop(rule, identical, 100.0), StopReason::converged);
}

TEST(ShouldStop, NoisySamplesNeverConvergeAndStopOnTimeLimit) {
  const StoppingRule rule = *stopping_preset("default");
  const Stopped run = run_until_stop(rule, [](std::size_t i) { return i % 2 == 0 ? 1.0 : 1.5; }, 10);
  EXPECT_EQ(run.reason, StopReason::time_limit);
  EXPECT_DOUBLE_EQ(run.elapsed_ms, rule.max_time_ms);
}

TEST(ShouldStop, SteadySamplesConvergeAsSoonAsMinimumsAreMet) {
  // 1 ms per sample: 100 samples are needed to reach the default 100 ms minimum time.
  const Stopped run = run_until_stop(
      *stopping_preset("default"), [](std::size_t i) { return 1.0 + 0.001 * static_cast<double>(i % 3); }, 1);
  EXPECT_EQ(run.reason, StopReason::converged);
  EXPECT_EQ(run.samples.size(), 100u);
}

TEST(ShouldStop, StopsAtSampleCap) {
  EXPECT_EQ(should_stop(small_rule(), alternating(49), 500.0), std::nullopt);
  EXPECT_EQ(should_stop(small_rule(), alternating(50), 500.0), StopReason::max_samples);
}

TEST(ShouldStop, SampleCapAppliesBeforeMinimumTime) {
  EXPECT_EQ(should_stop(small_rule(), steady(50), 10.0), StopReason::max_samples);
}

TEST(ShouldStop, TimeLimitStopsSlowKernelWithFewerThanMinimumSamples) {
  EXPECT_EQ(should_stop(small_rule(), steady(3), 1000.0), StopReason::time_limit);
  EXPECT_EQ(should_stop(small_rule(), std::span<const double>{}, 1000.0), StopReason::time_limit);
}

TEST(ShouldStop, QuietCaseAtTimeLimitCountsAsConverged) {
  EXPECT_EQ(should_stop(small_rule(), steady(10), 1000.0), StopReason::converged);
}

TEST(ShouldStop, QuietCaseAtSampleCapCountsAsConverged) {
  EXPECT_EQ(should_stop(small_rule(), steady(50), 500.0), StopReason::converged);
}

TEST(ShouldStop, ReachingTimeLimitSatisfiesMinimumTimeSetAboveIt) {
  StoppingRule rule = small_rule();
  rule.min_time_ms = 2000;  // misconfigured above max_time_ms
  EXPECT_EQ(should_stop(rule, steady(10), 1000.0), StopReason::converged);
  EXPECT_EQ(should_stop(rule, alternating(10), 1000.0), StopReason::time_limit);
}

TEST(MedianInterval, OrderStatisticsAtTheNormalApproximationsRanks) {
  // 1..100: ranks floor(50 - 9.8) = 40 and ceil(51 + 9.8) = 61, median 50.5.
  std::vector<double> ramp;
  for (int i = 1; i <= 100; ++i) ramp.push_back(i);
  EXPECT_DOUBLE_EQ(median_ci_relative_half_width(ramp), (61.0 - 40.0) / (2 * 50.5));
  // Identical samples pin the median exactly.
  const std::vector<double> identical(50, 3.0);
  EXPECT_EQ(median_ci_relative_half_width(identical), 0.0);
}

TEST(MedianInterval, TooFewSamplesOrAZeroMedianGiveNoInterval) {
  const std::vector<double> seven{1, 2, 3, 4, 5, 6, 7};
  EXPECT_TRUE(std::isinf(median_ci_relative_half_width(seven)));
  const std::vector<double> zeros(20, 0.0);
  EXPECT_TRUE(std::isinf(median_ci_relative_half_width(zeros)));
}

TEST(MedianInterval, NarrowsAsSamplesGrowWhileTheSpreadStays) {
  // The same +-5% spread at 100 and 10000 samples: the IQR stays, the interval shrinks ~10x.
  const auto spread = [](std::size_t n) {
    std::vector<double> samples;
    for (std::size_t i = 0; i < n; ++i)
      samples.push_back(0.95 + 0.1 * std::fmod(0.6180339887 * static_cast<double>(i), 1.0));
    std::sort(samples.begin(), samples.end());
    return samples;
  };
  const double few = median_ci_relative_half_width(spread(100));
  const double many = median_ci_relative_half_width(spread(10000));
  EXPECT_GT(summarize(spread(10000)).noise, 0.04);
  EXPECT_NEAR(few / many, 10.0, 1.5);
}

// A cold, short kernel: a +-5% spread (relative IQR 5%, over the default 2% target) at 1 ms a
// sample. Its median is known to 0.5% after a few hundred samples; the rule stops there
// instead of running to the 1.5 s time limit and calling the case noisy.
TEST(ShouldStop, ASpreadThatDoesNotShrinkConvergesOnceTheMedianIsPrecise) {
  const StoppingRule rule = *stopping_preset("default");
  const Stopped run = run_until_stop(
      rule, [](std::size_t i) { return 0.95 + 0.1 * std::fmod(0.6180339887 * static_cast<double>(i), 1.0); }, 1);
  const std::vector<double>& samples = run.samples;
  EXPECT_EQ(run.reason, StopReason::converged);
  EXPECT_GT(summarize(samples).noise, rule.target_noise);
  EXPECT_GT(samples.size(), 200u);   // not at the minimums: the interval decided
  EXPECT_LT(samples.size(), 1000u);  // and well before the 1500 ms limit
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_LE(median_ci_relative_half_width(sorted), rule.target_precision);
}

TEST(StoppingPreset, PrecisionTargetsTightenFromQuickToPrecise) {
  EXPECT_GT(stopping_preset("quick")->target_precision, stopping_preset("default")->target_precision);
  EXPECT_GT(stopping_preset("default")->target_precision, stopping_preset("precise")->target_precision);
  EXPECT_DOUBLE_EQ(stopping_preset("default")->target_precision, StoppingRule{}.target_precision);
}

}  // namespace
}  // namespace kwb
