// The clock rule: a side with more than 5% of its samples throttled, or SM clock middles more than
// 3% apart, makes a case's timings incomparable; the reason names the side and the numbers. No
// readings (no NVML) on a side: the rule cannot judge and stays silent.
#include <gtest/gtest.h>

#include "reports/compare/clock_rule.hpp"

namespace kwb {
namespace {

TimingResult with_clocks(double min_mhz, double max_mhz, std::int64_t throttled, std::vector<std::string> reasons = {}) {
  TimingResult t;
  t.clocks = ClockSummary{min_mhz, max_mhz, 1980, 20, 100, throttled, std::move(reasons)};
  return t;
}

bool mentions(const std::optional<std::string>& text, const std::string& part) {
  return text && text->find(part) != std::string::npos;
}

TEST(CompareClockRule, SteadyEqualClocksPass) {
  EXPECT_FALSE(clock_problem(with_clocks(1980, 1980, 0), with_clocks(1980, 1980, 0)));
  // A few throttled samples (5 of 100, at the limit) and a 2% shift are within the rule.
  EXPECT_FALSE(clock_problem(with_clocks(1950, 1980, 5), with_clocks(1900, 1950, 0)));
}

TEST(CompareClockRule, ThrottledSideIsNamedWithItsShareAndReasons) {
  const auto p = clock_problem(with_clocks(1980, 1980, 0), with_clocks(1410, 1980, 40, {"sw_power_cap"}));
  ASSERT_TRUE(p);
  EXPECT_TRUE(mentions(p, "throttled: NEW had 40 of 100 samples (40%) throttled (sw_power_cap), SM clock 1410-1980 MHz"))
      << *p;
  EXPECT_TRUE(mentions(p, "more than 5%")) << *p;
  EXPECT_FALSE(mentions(p, "BASE had")) << *p;
  const auto both = clock_problem(with_clocks(1500, 1980, 6), with_clocks(1410, 1980, 40));
  EXPECT_TRUE(mentions(both, "BASE had 6 of 100")) << both.value_or("");
  EXPECT_TRUE(mentions(both, "NEW had 40 of 100")) << both.value_or("");
}

TEST(CompareClockRule, ShiftedClocksAreNamedWithBothRangesAndTheShift) {
  // Neither side throttled, but NEW ran about 9% lower (locked clocks, another boost state).
  const auto p = clock_problem(with_clocks(1980, 1980, 0), with_clocks(1800, 1800, 0));
  ASSERT_TRUE(p);
  EXPECT_TRUE(mentions(p, "clock-shifted: SM clock BASE 1980-1980 MHz, NEW 1800-1800 MHz")) << *p;
  EXPECT_TRUE(mentions(p, "-9.1%")) << *p;
  EXPECT_TRUE(mentions(p, "3%")) << *p;
  EXPECT_TRUE(clock_problem(with_clocks(1800, 1800, 0), with_clocks(1980, 1980, 0))) << "either direction";
}

TEST(CompareClockRule, NoReadingsOnASideCannotBeJudged) {
  TimingResult none;
  EXPECT_FALSE(clock_problem(none, with_clocks(1800, 1800, 0)));
  EXPECT_FALSE(clock_problem(none, none));
  // A throttled side is still named when the other has no readings.
  EXPECT_TRUE(clock_problem(none, with_clocks(1410, 1980, 50)));
}

}  // namespace
}  // namespace kwb
