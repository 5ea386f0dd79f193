// The clock rule. With mean clocks (today's reports): a slower or faster verdict stands only if it
// also holds for the cycle ratio (the interval scaled by the clock ratio), and, where half a side's
// samples ran under the power cap, only with the case's run-to-run spread known or beyond the
// cap's swing. Without them
// (older reports): a side with more than 5% of its samples throttled, or SM clock middles more
// than 3% apart, makes the case ambiguous. No readings on a side: silent.
#include <gtest/gtest.h>

#include "reports/compare/clock_rule.hpp"

namespace kwb {
namespace {

TimingResult with_clocks(double min_mhz, double max_mhz, std::int64_t throttled, std::vector<std::string> reasons = {},
                         double mean_mhz = 0) {
  TimingResult t;
  t.clocks = ClockSummary{min_mhz, max_mhz, 1980, 20, 100, throttled, std::move(reasons), mean_mhz};
  return t;
}

Decision verdict(Verdict v, double lo, double hi, double band = 0.03) {
  Decision d;
  d.verdict = v;
  d.ratio = {(lo + hi) / 2, lo, hi};
  d.tolerance = band;
  return d;
}

const Decision kSlower = verdict(Verdict::slower, 1.046, 1.049);

bool mentions(const std::optional<std::string>& text, const std::string& part) {
  return text && text->find(part) != std::string::npos;
}

TEST(CompareClockRule, OnlySlowerOrFasterVerdictsAreJudged) {
  const auto throttled = with_clocks(1410, 1980, 40, {"sw_power_cap"});
  EXPECT_FALSE(clock_problem(with_clocks(1980, 1980, 0), throttled, verdict(Verdict::same, 0.99, 1.01)));
  EXPECT_FALSE(clock_problem(with_clocks(1980, 1980, 0), throttled, verdict(Verdict::ambiguous, 0.99, 1.05)));
}

// ---- with mean clocks -------------------------------------------------------------------

TEST(CompareClockRule, BothSidesThrottledAtTheSameMeanClockKeepTheVerdictUnlessPowerCapped) {
  // Thermal slowdown on both sides at the same mean clock: no clock difference explains 4.8%.
  const auto warm_base = with_clocks(1710, 1965, 48, {"sw_thermal_slowdown"}, 1840);
  const auto warm_next = with_clocks(1695, 1980, 79, {"sw_thermal_slowdown"}, 1838);
  EXPECT_FALSE(clock_problem(warm_base, warm_next, kSlower));
  // A GEMM under the power cap (79% of NEW's samples): the mean of the readings between launches
  // does not show the cap's swing (an A/A pair read +4.7% at mean clocks 0.5% apart), so two
  // reports alone cannot call it; with the case's run-to-run spread known, its band covers the
  // swing and the verdict stands.
  const auto base = with_clocks(1710, 1965, 48, {"sw_power_cap"}, 1840);
  const auto next = with_clocks(1695, 1980, 79, {"sw_power_cap"}, 1838);
  const auto p = clock_problem(base, next, kSlower);
  ASSERT_TRUE(p);
  EXPECT_TRUE(mentions(p, "power-capped: BASE mean SM clock 1840 MHz (48% of its samples throttled)")) << *p;
  EXPECT_TRUE(mentions(p, "--confirm")) << *p;
  EXPECT_TRUE(mentions(p, "--base-runs")) << *p;
  EXPECT_FALSE(clock_problem(base, next, kSlower, /*spread_runs=*/2));
  EXPECT_TRUE(clock_problem(base, next, kSlower, /*spread_runs=*/1)) << "one other run is too thin a spread";
  // A change beyond the cap's swing (10% past the 3% band) stands: a GEMM that always runs under
  // the cap can still fail the gate.
  EXPECT_FALSE(clock_problem(base, next, verdict(Verdict::slower, 1.14, 1.16)));
  EXPECT_TRUE(clock_problem(base, next, verdict(Verdict::slower, 1.12, 1.16)));
  EXPECT_FALSE(clock_problem(base, next, verdict(Verdict::faster, 0.85, 0.86)));
  // Under half of each side's samples capped: the cap is occasional, the verdict stands.
  EXPECT_FALSE(clock_problem(base, with_clocks(1695, 1980, 40, {"sw_power_cap"}, 1838), kSlower));
  // The hardware power brake counts as the cap; a faster verdict is judged alike.
  EXPECT_TRUE(clock_problem(with_clocks(1980, 1980, 0, {}, 1980),
                            with_clocks(1400, 1980, 60, {"hw_power_brake_slowdown"}, 1975),
                            verdict(Verdict::faster, 0.94, 0.95)));
}

TEST(CompareClockRule, AVerdictTheClockRatioExplainsIsNamedWithTheScaledInterval) {
  // NEW ran 4% lower: a 4.8% slowdown scales to about +0.6%, inside the 3% band.
  const auto base = with_clocks(1900, 1980, 0, {}, 1960);
  const auto next = with_clocks(1700, 1980, 60, {"sw_thermal_slowdown"}, 1882);  // not the power cap
  const auto p = clock_problem(base, next, kSlower);
  ASSERT_TRUE(p);
  EXPECT_TRUE(mentions(p, "BASE mean SM clock 1960 MHz (0% of its samples throttled)")) << *p;
  EXPECT_TRUE(mentions(p, "NEW mean SM clock 1882 MHz (60% of its samples throttled)")) << *p;
  EXPECT_TRUE(mentions(p, "inside the +-3% band")) << *p;
  // The same shift the other way makes the slowdown larger: it stands.
  EXPECT_FALSE(clock_problem(next, base, kSlower));
  // A faster verdict that a higher NEW clock explains.
  EXPECT_TRUE(clock_problem(next, base, verdict(Verdict::faster, 0.955, 0.958)));
  EXPECT_FALSE(clock_problem(base, next, verdict(Verdict::faster, 0.955, 0.958)));
}

// ---- reports without mean clocks ---------------------------------------------------------

TEST(CompareClockRule, SteadyEqualClocksPass) {
  EXPECT_FALSE(clock_problem(with_clocks(1980, 1980, 0), with_clocks(1980, 1980, 0), kSlower));
  // A few throttled samples (5 of 100, at the limit) and a 2% shift are within the rule.
  EXPECT_FALSE(clock_problem(with_clocks(1950, 1980, 5), with_clocks(1900, 1950, 0), kSlower));
}

TEST(CompareClockRule, ThrottledSideIsNamedWithItsShareAndReasons) {
  const auto p = clock_problem(with_clocks(1980, 1980, 0), with_clocks(1410, 1980, 40, {"sw_power_cap"}), kSlower);
  ASSERT_TRUE(p);
  EXPECT_TRUE(mentions(p, "throttled: NEW had 40 of 100 samples (40%) throttled (sw_power_cap), SM clock 1410-1980 MHz"))
      << *p;
  EXPECT_TRUE(mentions(p, "more than 5%")) << *p;
  EXPECT_FALSE(mentions(p, "BASE had")) << *p;
  const auto both = clock_problem(with_clocks(1500, 1980, 6), with_clocks(1410, 1980, 40), kSlower);
  EXPECT_TRUE(mentions(both, "BASE had 6 of 100")) << both.value_or("");
  EXPECT_TRUE(mentions(both, "NEW had 40 of 100")) << both.value_or("");
}

TEST(CompareClockRule, ShiftedClocksAreNamedWithBothRangesAndTheShift) {
  // Neither side throttled, but NEW ran about 9% lower (locked clocks, another boost state).
  const auto p = clock_problem(with_clocks(1980, 1980, 0), with_clocks(1800, 1800, 0), kSlower);
  ASSERT_TRUE(p);
  EXPECT_TRUE(mentions(p, "clock-shifted: SM clock BASE 1980-1980 MHz, NEW 1800-1800 MHz")) << *p;
  EXPECT_TRUE(mentions(p, "-9.1%")) << *p;
  EXPECT_TRUE(mentions(p, "3%")) << *p;
  EXPECT_TRUE(clock_problem(with_clocks(1800, 1800, 0), with_clocks(1980, 1980, 0), kSlower)) << "either direction";
}

TEST(CompareClockRule, NoReadingsOnASideCannotBeJudged) {
  TimingResult none;
  EXPECT_FALSE(clock_problem(none, with_clocks(1800, 1800, 0), kSlower));
  EXPECT_FALSE(clock_problem(none, none, kSlower));
  // A throttled side is still named when the other has no readings.
  EXPECT_TRUE(clock_problem(none, with_clocks(1410, 1980, 50), kSlower));
}

}  // namespace
}  // namespace kwb
