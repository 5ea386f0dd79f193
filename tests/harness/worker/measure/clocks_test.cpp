// The per-case clock summary: min and max over the readings, samples of throttled batches
// counted, reasons named, and absent (not zero) when no reading was taken.
#include "harness/worker/measure/clocks.hpp"

#include <gtest/gtest.h>

#include <random>

namespace kwb {
namespace {

constexpr double kMax = 1980;

TEST(ReadingThrottled, FullClockWithNoReasonIsNotThrottled) {
  EXPECT_FALSE(reading_throttled({1980, 0}, kMax));
  EXPECT_FALSE(reading_throttled({0.9 * kMax, std::nullopt}, kMax)) << "exactly 90% is not under it";
}

TEST(ReadingThrottled, ClockUnderNinetyPercentIsThrottledWithoutAnyReason) {
  EXPECT_TRUE(reading_throttled({0.9 * kMax - 1, std::nullopt}, kMax));
  EXPECT_TRUE(reading_throttled({345, 0}, kMax));
}

TEST(ReadingThrottled, PowerOrThermalReasonIsThrottledAtFullClock) {
  for (std::uint64_t bit : {0x4ull, 0x8ull, 0x20ull, 0x40ull, 0x80ull})
    EXPECT_TRUE(reading_throttled({kMax, bit}, kMax)) << bit;
}

TEST(ReadingThrottled, IdleApplicationClockAndSyncBoostBitsAreNotThrottling) {
  EXPECT_FALSE(reading_throttled({kMax, 0x1 | 0x2 | 0x10 | 0x100}, kMax));
}

TEST(ReadingThrottled, UnknownRatedClockJudgesByReasonsOnly) {
  EXPECT_FALSE(reading_throttled({100, 0}, 0));
  EXPECT_TRUE(reading_throttled({100, 0x40}, 0));
}

TEST(SummarizeClocks, NoReadingGivesNoSummary) {
  EXPECT_FALSE(summarize_clocks({}, kMax).has_value());
  EXPECT_FALSE(summarize_clocks({{20, {}}, {64, {}}}, kMax).has_value()) << "NVML absent: absent, not zero";
}

TEST(SummarizeClocks, CountsEverySampleOfAThrottledBatchAndNoneOfTheOthers) {
  std::mt19937 rng(20261122);
  std::uniform_int_distribution<int> batch_size(1, 64), clock(1800, 1980), slow(600, 1700);
  std::vector<BatchClocks> batches;
  std::int64_t expected_throttled = 0, expected_samples = 0;
  double expected_min = 1e9, expected_max = 0, weighted = 0;
  for (int b = 0; b < 40; ++b) {
    BatchClocks batch;
    batch.samples = batch_size(rng);
    const bool throttle = b % 7 == 3;
    const double first = clock(rng), second = throttle ? slow(rng) : clock(rng);
    batch.readings = {{first, 0x1}, {second, 0}};
    for (double v : {first, second}) {
      expected_min = std::min(expected_min, v);
      expected_max = std::max(expected_max, v);
    }
    expected_samples += batch.samples;
    weighted += (first + second) / 2 * static_cast<double>(batch.samples);
    if (throttle) expected_throttled += batch.samples;
    batches.push_back(batch);
  }
  const auto s = summarize_clocks(batches, kMax);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->samples, expected_samples);
  EXPECT_EQ(s->throttled_samples, expected_throttled);
  EXPECT_GT(s->throttled_samples, 0);
  EXPECT_LT(s->throttled_samples, s->samples);
  EXPECT_EQ(s->readings, 80);
  EXPECT_EQ(s->sm_min_mhz, expected_min);
  EXPECT_EQ(s->sm_max_mhz, expected_max);
  EXPECT_EQ(s->sm_rated_max_mhz, kMax);
  // The mean clock weights each batch's mean reading by the samples it ran.
  EXPECT_NEAR(s->sm_mean_mhz, weighted / static_cast<double>(expected_samples), 1e-9);
  EXPECT_TRUE(s->throttle_reasons.empty()) << "the idle bit is not a throttle reason";
}

TEST(SummarizeClocks, NamesEachThrottleReasonOnceInBitOrder) {
  std::vector<BatchClocks> batches = {{10, {{1980, 0x40}, {1980, 0x4}}}, {5, {{1980, 0x40 | 0x8}}}};
  const auto s = summarize_clocks(batches, kMax);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->throttled_samples, 15);
  EXPECT_EQ(s->throttle_reasons,
            (std::vector<std::string>{"hw_thermal_slowdown", "sw_power_cap", "hw_slowdown"}));
}

TEST(ThrottleReasonNames, NamesOnlyThePowerAndThermalBits) {
  EXPECT_EQ(throttle_reason_names(0x4 | 0x20 | 0x80 | 0x1),
            (std::vector<std::string>{"sw_power_cap", "sw_thermal_slowdown", "hw_power_brake_slowdown"}));
  EXPECT_TRUE(throttle_reason_names(0x1 | 0x2 | 0x10).empty());
}

}  // namespace
}  // namespace kwb
