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
  EXPECT_LE(quick.min_samples, normal.min_samples);
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
  EXPECT_LT(quick.warmup_min_ms, normal.warmup_min_ms);
  EXPECT_LT(normal.warmup_min_ms, precise.warmup_min_ms);
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
  EXPECT_DOUBLE_EQ(preset.warmup_min_ms, constructed.warmup_min_ms);
}

TEST(StoppingPreset, DefaultHasDocumentedValues) {
  const StoppingRule normal = *stopping_preset("default");
  EXPECT_EQ(normal.min_samples, 10);
  EXPECT_DOUBLE_EQ(normal.min_time_ms, 100);
  EXPECT_DOUBLE_EQ(normal.warmup_ms, 100);
  EXPECT_DOUBLE_EQ(normal.warmup_min_ms, 10);
}

TEST(StoppingPreset, QuickHasDocumentedValues) {
  const StoppingRule quick = *stopping_preset("quick");
  EXPECT_EQ(quick.min_samples, 10);
  EXPECT_DOUBLE_EQ(quick.min_time_ms, 20);
  EXPECT_DOUBLE_EQ(quick.target_noise, 0.05);
  EXPECT_DOUBLE_EQ(quick.max_time_ms, 400);
  EXPECT_EQ(quick.max_samples, 2000);
  EXPECT_DOUBLE_EQ(quick.warmup_ms, 30);
  EXPECT_DOUBLE_EQ(quick.warmup_min_ms, 5);
}

TEST(StoppingPreset, PreciseHasDocumentedValues) {
  const StoppingRule precise = *stopping_preset("precise");
  EXPECT_EQ(precise.min_samples, 100);
  EXPECT_DOUBLE_EQ(precise.min_time_ms, 500);
  EXPECT_DOUBLE_EQ(precise.target_noise, 0.005);
  EXPECT_DOUBLE_EQ(precise.max_time_ms, 10000);
  EXPECT_EQ(precise.max_samples, 100000);
  EXPECT_DOUBLE_EQ(precise.warmup_ms, 300);
  EXPECT_DOUBLE_EQ(precise.warmup_min_ms, 300) << "the reference preset keeps a fixed warm-up";
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

// Warm-up: the default rule (10 ms floor, 100 ms cap).
TEST(WarmupDone, SettledRoundsWithTheClockUpEndItAtItsFloor) {
  const StoppingRule rule = *stopping_preset("default");
  const std::vector<double> settled{0.50, 0.41, 0.402};
  EXPECT_FALSE(warmup_done(rule, settled, 30, 9.9, true)) << "under the floor";
  EXPECT_TRUE(warmup_done(rule, settled, 30, 10.0, true));
  EXPECT_FALSE(warmup_done(rule, settled, 30, 50.0, false)) << "the clock is still held down";
  EXPECT_TRUE(warmup_done(rule, settled, 30, 100.0, false)) << "the cap ends it whatever the clock";
}

TEST(WarmupDone, RoundsThatStillSpeedUpOrJitterKeepItGoingToTheCap) {
  const StoppingRule rule = *stopping_preset("default");
  const std::vector<double> ramping{1.0, 0.9, 0.85};  // 5.6% faster: clocks still rising
  EXPECT_FALSE(warmup_done(rule, ramping, 3, 60.0, true));
  EXPECT_TRUE(warmup_done(rule, ramping, 3, 100.5, true));
  const std::vector<double> edge{1.0, 1.0 + 0.99 * kWarmupSettledShare};
  EXPECT_TRUE(warmup_done(rule, edge, 2, 20.0, true)) << "a difference within the share has settled";
  const std::vector<double> slower{1.0, 1.03};
  EXPECT_FALSE(warmup_done(rule, slower, 2, 20.0, true)) << "slowing down is not settled either";
}

TEST(WarmupDone, OneLaunchLongerThanTheCapIsWarmupEnoughButSettlingNeedsTwoRounds) {
  const StoppingRule rule = *stopping_preset("default");
  const std::vector<double> one_long{150.0};
  EXPECT_TRUE(warmup_done(rule, one_long, 1, 150.0, false)) << "one launch longer than the cap";
  const std::vector<double> one_round_many{0.4};
  EXPECT_FALSE(warmup_done(rule, one_round_many, 40, 16.0, true)) << "one round has nothing to agree with";
  const std::vector<double> one_each{5.0, 5.0};
  EXPECT_FALSE(warmup_done(rule, one_each, 1, 10.0, true)) << "settling needs two launches";
}

TEST(MinSamplesFor, LongKernelsGetWhatFitsInTheTimeLimitButNeverUnderFive) {
  const StoppingRule rule = *stopping_preset("default");  // 10 samples, 1500 ms
  EXPECT_EQ(min_samples_for(rule, 0.05), 10);
  EXPECT_EQ(min_samples_for(rule, 135.0), 10) << "10 fit exactly in 90% of the limit";
  EXPECT_EQ(min_samples_for(rule, 150.0), 9);
  EXPECT_EQ(min_samples_for(rule, 200.0), 6);
  EXPECT_EQ(min_samples_for(rule, 2370.0), kFewestSamples) << "a naive GEMM of 2.4 s a launch";
  EXPECT_EQ(min_samples_for(rule, 0.0), 10) << "no estimate: the rule's own";
  StoppingRule two = rule;
  two.min_samples = 2;
  EXPECT_EQ(min_samples_for(two, 5000.0), 2) << "never more than the rule asks";
}

TEST(WarmupDone, AFixedWarmupIgnoresSettlingUntilItsLength) {
  StoppingRule rule = *stopping_preset("default");
  rule.warmup_min_ms = rule.warmup_ms;  // what KWB_WARMUP=fixed does
  const std::vector<double> settled{0.4, 0.4, 0.4};
  EXPECT_FALSE(warmup_done(rule, settled, 300, 99.0, true));
  EXPECT_TRUE(warmup_done(rule, settled, 300, 100.0, true));
}

TEST(NextBatch, FirstBatchIsTheMinimumThenJustEnoughToReachTheMinimumTime) {
  const StoppingRule rule = *stopping_preset("default");
  EXPECT_EQ(next_batch(rule, 0, 0.0), 10u);
  // 10 samples of 4.4 ms: 56 ms more reach 100 ms, 13 samples, not the 64 a cap-sized batch was.
  EXPECT_EQ(next_batch(rule, 10, 44.0), 13u);
  // Long kernels: 10 samples of 68 ms are past the minimum time; a quarter more is 2.
  EXPECT_EQ(next_batch(rule, 10, 680.0), 2u);
}

TEST(NextBatch, GrowsByAQuarterOnceTheMinimumTimeIsReachedAndStaysInItsBounds) {
  const StoppingRule rule = *stopping_preset("default");
  EXPECT_EQ(next_batch(rule, 40, 120.0), 10u);
  EXPECT_EQ(next_batch(rule, 4000, 300.0), 64u) << "at most 64";
  EXPECT_EQ(next_batch(rule, 12, 1450.0), 1u) << "at least 1";
  // Near the limit: a quarter of what it leaves (1400 ms used at 50 ms a sample: 100 ms left, 2
  // samples, a quarter of that rounds down to the minimum of 1).
  EXPECT_EQ(next_batch(rule, 28, 1400.0), 1u);
  StoppingRule capped = rule;
  capped.max_samples = 42;
  EXPECT_EQ(next_batch(capped, 40, 120.0), 2u) << "never past max_samples";
}

// A kernel given fewer than min_samples because of its length gets them all, not a time-limited
// share: precise's 100 samples of a 99 ms kernel become 90, taken as 64 and then the 26 left.
TEST(NextBatch, TheMinimumCountComesFirstWhole) {
  StoppingRule rule = *stopping_preset("precise");
  rule.min_samples = min_samples_for(rule, 99.0);
  EXPECT_EQ(rule.min_samples, 90);
  EXPECT_EQ(next_batch(rule, 0, 0.0), 64u);
  EXPECT_EQ(next_batch(rule, 64, 64 * 99.0), 26u) << "the rest of the minimum, whatever the limit leaves";
  EXPECT_EQ(next_batch(*stopping_preset("default"), 3, 200.0), 7u);
}

TEST(NextBatch, FastKernelsReachTheMinimumTimeInBatchesOf64) {
  const StoppingRule rule = *stopping_preset("default");
  // 10 samples of 30 us: 99.7 ms to go at 0.03 ms a sample, capped at 64.
  EXPECT_EQ(next_batch(rule, 10, 0.3), 64u);
}

}  // namespace
}  // namespace kwb

