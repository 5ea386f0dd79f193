// Where the gate's rules come from: an explicit --threshold wins for every op, then BASE's suite
// (per op, then its default), never NEW's, then 3%; --fail-on (none included) wins over BASE's
// suite's compare.fail_on. Each source is said in one line.
#include <gtest/gtest.h>

#include "reports/compare/compare_report.hpp"
#include "reports/compare/gate_settings.hpp"
#include "tests/reports/compare/compare_test_support.hpp"

namespace kwb {
namespace gate_settings_test {
namespace {

using test::empty_report;

Report with_suite(double default_threshold, std::map<std::string, double> per_op, std::vector<FailOnClass> fail_on = {}) {
  Report r = empty_report();
  r.run.suite = SuiteInfo{.name = "nightly", .path = "suites/nightly.yaml", .default_threshold = default_threshold,
                          .op_thresholds = std::move(per_op), .compare_fail_on = std::move(fail_on)};
  return r;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(CompareGateSettings, AnExplicitThresholdWinsForEveryOp) {
  const ThresholdChoice c = choose_thresholds(0.01, with_suite(0.03, {{"rms", 0.10}}));
  EXPECT_TRUE(c.per_op.empty());
  EXPECT_DOUBLE_EQ(c.fallback, 0.01);
  EXPECT_DOUBLE_EQ(threshold_for("rms", c.per_op, c.fallback), 0.01);
  EXPECT_EQ(c.source, "thresholds: 1% for every op (--threshold)");
}

TEST(CompareGateSettings, WithoutTheFlagBaseSuitePerOpThenItsDefault) {
  const ThresholdChoice c = choose_thresholds(std::nullopt, with_suite(0.02, {{"rms", 0.10}}));
  EXPECT_DOUBLE_EQ(threshold_for("rms", c.per_op, c.fallback), 0.10);
  EXPECT_DOUBLE_EQ(threshold_for("soft", c.per_op, c.fallback), 0.02);
  EXPECT_TRUE(has(c.source, "2% by default, 10% for rms (from BASE's suite 'nightly' (suites/nightly.yaml)"))
      << c.source;
}

TEST(CompareGateSettings, WithoutFlagOrBaseSuiteThreePercent) {
  const ThresholdChoice c = choose_thresholds(std::nullopt, empty_report());
  EXPECT_TRUE(c.per_op.empty());
  EXPECT_DOUBLE_EQ(c.fallback, 0.03);
  EXPECT_TRUE(has(c.source, "3% for every op (the default")) << c.source;
}

TEST(CompareGateSettings, NewSuiteThresholdsAreNeverRead) {
  // NEW run from a loose suite and BASE from none: the gate stays at 3%, and a 5% slowdown is caught.
  const auto s = test::noisy_samples(1, 200, 100.0, 0.01);
  Report base = empty_report(), next = with_suite(0.10, {{"rms", 0.20}});
  base.cases = {test::timed_case("rms", "a", 1, s)};
  next.cases = {test::timed_case("rms", "a", 1, test::scaled(s, 1.05))};
  const ThresholdChoice c = choose_thresholds(std::nullopt, base);
  CompareInputs in;
  in.base = &base;
  in.next = &next;
  in.suite_thresholds = c.per_op;
  in.settings.threshold = c.fallback;
  const CompareReport r = compare_reports(in);
  EXPECT_EQ(r.cases[0].outcome, CaseOutcome::slower);
  EXPECT_DOUBLE_EQ(r.cases[0].threshold, 0.03);
}

TEST(CompareGateSettings, FailOnFlagWinsOverBaseSuiteAndNoneClearsIt) {
  const Report base = with_suite(0.03, {}, {FailOnClass::missing, FailOnClass::skipped});
  const FailOnChoice suite = choose_fail_on(std::nullopt, base);
  EXPECT_EQ(suite.classes, (std::vector<FailOnClass>{FailOnClass::missing, FailOnClass::skipped}));
  EXPECT_EQ(suite.source, "fails on: slower and failed cases, and missing, skipped (from BASE's suite 'nightly' "
                          "(suites/nightly.yaml))");
  const FailOnChoice flag = choose_fail_on(std::vector<FailOnClass>{FailOnClass::ambiguous}, base);
  EXPECT_EQ(flag.classes, std::vector<FailOnClass>{FailOnClass::ambiguous});
  EXPECT_TRUE(has(flag.source, "and ambiguous (from --fail-on)")) << flag.source;
  const FailOnChoice none = choose_fail_on(std::vector<FailOnClass>{}, base);
  EXPECT_TRUE(none.classes.empty());
  EXPECT_TRUE(has(none.source, "only (--fail-on none)")) << none.source;
  EXPECT_TRUE(choose_fail_on(std::nullopt, empty_report()).classes.empty());
}

}  // namespace
}  // namespace gate_settings_test
}  // namespace kwb
