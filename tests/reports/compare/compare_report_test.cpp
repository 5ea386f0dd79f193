// The comparison model: matching by identity, failures in NEW, geometric means, thresholds from
// the suite, and environment differences.
#include <gtest/gtest.h>

#include <cmath>

#include "reports/compare/compare_report.hpp"
#include "reports/compare/match.hpp"
#include "harness/record/json_node.hpp"
#include "tests/reports/compare/compare_test_support.hpp"

namespace kwb {
namespace {

using test::empty_report;
using test::noisy_samples;
using test::scaled;
using test::timed_case;

CompareReport compare(const Report& base, const Report& next, std::map<std::string, double> suite = {}) {
  CompareInputs in;
  in.base = &base;
  in.next = &next;
  in.suite_thresholds = std::move(suite);
  return compare_reports(in);
}

const ComparedCase& find_case(const CompareReport& r, const std::string& variant) {
  for (const auto& c : r.cases)
    if (c.key.find(":" + variant + ":") != std::string::npos) return c;
  throw std::runtime_error("no case " + variant);
}

TEST(CompareMatch, PairsByIdentityAndListsTheRest) {
  const auto s = noisy_samples(1, 20, 10.0, 0.01);
  std::vector<CaseRecord> base = {timed_case("rms", "a", 1024, s), timed_case("rms", "b", 1024, s),
                                  timed_case("rms", "a", 2048, s)};
  std::vector<CaseRecord> next = {timed_case("rms", "a", 2048, s), timed_case("rms", "a", 1024, s),
                                  timed_case("rms", "c", 1024, s)};
  const CaseMatch m = match_cases(base, next);
  ASSERT_EQ(m.pairs.size(), 2u);
  EXPECT_EQ(m.pairs[0].key, "rms:a:bf16:2048x4096");  // NEW's order
  EXPECT_EQ(m.pairs[0].base, &base[2]);
  EXPECT_EQ(m.pairs[1].base, &base[0]);
  ASSERT_EQ(m.only_in_base.size(), 1u);
  EXPECT_EQ(m.only_in_base[0]->variant, "b");
  ASSERT_EQ(m.only_in_new.size(), 1u);
  EXPECT_EQ(m.only_in_new[0]->variant, "c");
}

TEST(CompareMatch, TunablesChoiceAxesAndDtypeArePartOfTheIdentity) {
  const auto s = noisy_samples(2, 20, 10.0, 0.01);
  CaseRecord x = timed_case("attn", "tiled", 2, s);
  x.shape.axes.push_back({"layout", AxisValue("bshd")});
  x.tunables = {{"block", 256}};
  CaseRecord other_block = x, other_layout = x, other_dtype = x;
  other_block.tunables = {{"block", 512}};
  other_layout.shape.axes.back().second = AxisValue("bhsd");
  other_dtype.dtype = DType::fp16;
  const CaseMatch m = match_cases({x}, {other_block, other_layout, other_dtype, x});
  ASSERT_EQ(m.pairs.size(), 1u);
  EXPECT_EQ(m.pairs[0].key, "attn:tiled:bf16:2x4096,layout=bshd:block=256");
  EXPECT_EQ(m.only_in_new.size(), 3u);
}

TEST(CompareMatch, ACaseTwiceInOneReportIsRefusedWithItsPlace) {
  const auto s = noisy_samples(3, 20, 10.0, 0.01);
  const CaseRecord c = timed_case("rms", "a", 1024, s);
  try {
    match_cases({c}, {timed_case("rms", "b", 1, s), c, c}, "base.json", "new.json");
    FAIL() << "a duplicate must be refused";
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find("new.json: cases[2]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cases[1]"), std::string::npos) << e.what();
  }
}

TEST(CompareReportModel, VerificationFailureInNewIsAFailureWhateverTheTiming) {
  const auto s = noisy_samples(4, 100, 10.0, 0.01);
  Report base = empty_report(), next = empty_report();
  base.cases = {timed_case("rms", "a", 1024, s), timed_case("rms", "b", 1024, s)};
  next.cases = {timed_case("rms", "a", 1024, s, Disposition::failed), timed_case("rms", "b", 1024, s)};
  next.cases[0].reason = "3 mismatches, first at out[17]";
  const CompareReport r = compare(base, next);
  EXPECT_EQ(find_case(r, "a").outcome, CaseOutcome::failed);
  EXPECT_NE(find_case(r, "a").note.find("out[17]"), std::string::npos);
  EXPECT_EQ(find_case(r, "b").outcome, CaseOutcome::same);
  EXPECT_TRUE(r.regression());
  // Failed cases lead the reading order even with no change in time.
  EXPECT_EQ(by_largest_change(r).front()->outcome, CaseOutcome::failed);
}

TEST(CompareReportModel, SkippedAndUntimedCasesAreReportedNotRegressions) {
  const auto s = noisy_samples(5, 100, 10.0, 0.01);
  Report base = empty_report(), next = empty_report();
  base.cases = {timed_case("rms", "a", 1024, s), timed_case("rms", "b", 1024, s)};
  CaseRecord skipped = timed_case("rms", "a", 1024, s, Disposition::skipped);
  skipped.timing.reset();
  skipped.reason = "needs compute capability 10.0";
  CaseRecord unverified = timed_case("rms", "b", 1024, scaled(s, 0.8), Disposition::not_verified);
  next.cases = {skipped, unverified};
  const CompareReport r = compare(base, next);
  EXPECT_EQ(find_case(r, "a").outcome, CaseOutcome::not_timed);
  EXPECT_NE(find_case(r, "a").note.find("compute capability"), std::string::npos);
  EXPECT_EQ(find_case(r, "b").outcome, CaseOutcome::faster);
  EXPECT_NE(find_case(r, "b").note.find("not verified"), std::string::npos);
  EXPECT_EQ(r.skipped_in_new, 1);
  EXPECT_EQ(r.overall.unverified, 1);
  EXPECT_FALSE(r.regression());
}

TEST(CompareReportModel, GeometricMeanPerOpAndOverall) {
  const auto s = noisy_samples(6, 100, 10.0, 0.01);
  Report base = empty_report(), next = empty_report();
  base.cases = {timed_case("x", "a", 1, s), timed_case("x", "b", 1, s), timed_case("y", "a", 1, s)};
  // Scaling every sample scales the median exactly: ratios 2, 0.5 (op x) and 1.21 (op y).
  next.cases = {timed_case("x", "a", 1, scaled(s, 2.0)), timed_case("x", "b", 1, scaled(s, 0.5)),
                timed_case("y", "a", 1, scaled(s, 1.21))};
  const CompareReport r = compare(base, next);
  ASSERT_EQ(r.ops.size(), 2u);
  EXPECT_EQ(r.ops[0].op, "x");
  EXPECT_NEAR(r.ops[0].geomean_ratio, 1.0, 1e-12);
  EXPECT_EQ(r.ops[0].counts.at(CaseOutcome::slower), 1);
  EXPECT_EQ(r.ops[0].counts.at(CaseOutcome::faster), 1);
  EXPECT_NEAR(r.ops[1].geomean_ratio, 1.21, 1e-12);
  EXPECT_NEAR(r.overall.geomean_ratio, std::cbrt(2.0 * 0.5 * 1.21), 1e-12);
  EXPECT_EQ(r.overall.ratios, 3);
  // Largest change first: 2x and 0.5x (|log| equal) before 1.21x.
  EXPECT_EQ(by_largest_change(r).back()->op, "y");
}

TEST(CompareReportModel, SuiteThresholdPerOpWinsOverTheFlag) {
  const auto s = noisy_samples(7, 200, 100.0, 0.01);
  Report base = empty_report(), next = empty_report();
  base.cases = {timed_case("loose_op", "a", 1, s), timed_case("strict_op", "a", 1, s)};
  next.cases = {timed_case("loose_op", "a", 1, scaled(s, 1.05)), timed_case("strict_op", "a", 1, scaled(s, 1.05))};
  const CompareReport r = compare(base, next, {{"default", 0.02}, {"loose_op", 0.10}});
  EXPECT_EQ(find_case(r, "a").op, "loose_op");
  EXPECT_EQ(r.cases[0].outcome, CaseOutcome::same);
  EXPECT_DOUBLE_EQ(r.cases[0].threshold, 0.10);
  EXPECT_EQ(r.cases[1].outcome, CaseOutcome::slower);
  EXPECT_DOUBLE_EQ(r.cases[1].threshold, 0.02);
  EXPECT_DOUBLE_EQ(threshold_for("other", {}, 0.03), 0.03);
  EXPECT_DOUBLE_EQ(threshold_for("other", {{"default", 0.04}}, 0.03), 0.04);
}

TEST(CompareReportModel, ThrottledOrClockShiftedCasesAreAmbiguousThrottledNotSlower) {
  const auto s = noisy_samples(8, 200, 100.0, 0.01);
  Report base = empty_report(), next = empty_report();
  base.cases = {timed_case("rms", "a", 1, s), timed_case("rms", "b", 1, s), timed_case("rms", "c", 1, s)};
  next.cases = {timed_case("rms", "a", 1, scaled(s, 1.05)), timed_case("rms", "b", 1, scaled(s, 1.05)),
                timed_case("rms", "c", 1, s)};
  for (CaseRecord* c : {&base.cases[0], &base.cases[1], &base.cases[2], &next.cases[2]})
    c->timing->clocks = ClockSummary{1980, 1980, 1980, 20, 200, 0, {}};
  next.cases[0].timing->clocks = ClockSummary{1410, 1980, 1980, 20, 200, 80, {"sw_power_cap"}};
  next.cases[1].timing->clocks = ClockSummary{1830, 1830, 1980, 20, 200, 0, {}};
  next.cases[2].timing->clocks = ClockSummary{1410, 1980, 1980, 20, 200, 80, {"sw_power_cap"}};
  const CompareReport r = compare(base, next);
  const ComparedCase& throttled = find_case(r, "a");
  EXPECT_EQ(throttled.outcome, CaseOutcome::ambiguous);
  EXPECT_TRUE(throttled.throttled);
  EXPECT_EQ(throttled.outcome_label(), "ambiguous (throttled)");
  EXPECT_NE(throttled.note.find("throttled: NEW had 80 of 200 samples (40%)"), std::string::npos) << throttled.note;
  EXPECT_NE(throttled.note.find("the samples alone said slower"), std::string::npos) << throttled.note;
  const ComparedCase& shifted = find_case(r, "b");
  EXPECT_EQ(shifted.outcome_label(), "ambiguous (throttled)");
  EXPECT_NE(shifted.note.find("clock-shifted"), std::string::npos) << shifted.note;
  // The same time under a throttled clock is still "same": the rule only withholds a change.
  EXPECT_EQ(find_case(r, "c").outcome, CaseOutcome::same);
  EXPECT_FALSE(find_case(r, "c").throttled);
  EXPECT_FALSE(r.regression());
}

TEST(CompareReportModel, SpreadsFromOtherRunsWidenTheirCasesOnly) {
  const auto s = noisy_samples(9, 200, 100.0, 0.01);
  Report base = empty_report(), next = empty_report();
  base.cases = {timed_case("rms", "a", 1, s), timed_case("rms", "b", 1, s)};
  next.cases = {timed_case("rms", "a", 1, scaled(s, 1.05)), timed_case("rms", "b", 1, scaled(s, 1.05))};
  CompareInputs in;
  in.base = &base;
  in.next = &next;
  in.spreads["rms:a:bf16:1x4096"] = {0.07, 2};  // b: no other run measured it
  in.base_runs = 2;
  const CompareReport r = compare_reports(in);
  EXPECT_EQ(find_case(r, "a").outcome, CaseOutcome::same);
  EXPECT_TRUE(find_case(r, "a").decision.band_from_spread);
  EXPECT_NE(find_case(r, "a").note.find("run-to-run spread"), std::string::npos) << find_case(r, "a").note;
  EXPECT_EQ(find_case(r, "b").outcome, CaseOutcome::slower);
  EXPECT_EQ(r.base_runs, 2);
}

TEST(CompareReportModel, FailOnClassesCountAmbiguousMissingAndNewlySkipped) {
  const auto s = noisy_samples(10, 100, 10.0, 0.01);
  Report base = empty_report(), next = empty_report();
  base.cases = {timed_case("rms", "same_v", 1, s), timed_case("rms", "gone_v", 1, s), timed_case("rms", "skip_v", 1, s),
                timed_case("rms", "few_v", 1, s)};
  CaseRecord skipped = timed_case("rms", "skip_v", 1, s, Disposition::skipped);
  skipped.timing.reset();
  next.cases = {timed_case("rms", "same_v", 1, s), skipped, timed_case("rms", "few_v", 1, {10, 10.1, 9.9})};
  CompareInputs in;
  in.base = &base;
  in.next = &next;
  const CompareReport plain = compare_reports(in);
  EXPECT_EQ(plain.newly_skipped, std::vector<std::string>{"rms:skip_v:bf16:1x4096"});
  EXPECT_EQ(find_case(plain, "few_v").outcome, CaseOutcome::ambiguous);
  EXPECT_TRUE(plain.fail_on_hits().empty());
  EXPECT_FALSE(plain.fails()) << "ambiguous, missing and skipped pass unless named";
  in.fail_on = {FailOnClass::ambiguous, FailOnClass::missing, FailOnClass::skipped};
  const CompareReport strict = compare_reports(in);
  EXPECT_EQ(strict.fail_on_hits(), (std::vector<std::string>{"1 ambiguous", "1 missing from NEW",
                                                             "1 skipped in NEW (timed in BASE)"}));
  EXPECT_TRUE(strict.fails());
  EXPECT_FALSE(strict.regression()) << "a --fail-on class fails the gate, it is not a slowdown";
  in.fail_on = {FailOnClass::missing};
  EXPECT_EQ(compare_reports(in).fail_on_hits(), std::vector<std::string>{"1 missing from NEW"});
}

TEST(CompareReportModel, AJudgedCaseWithoutSamplesIsNamedWithTheFix) {
  const auto s = noisy_samples(11, 100, 10.0, 0.01);
  Report base = empty_report(), next = empty_report();
  base.cases = {timed_case("rms", "a", 1, s), timed_case("rms", "b", 1, s), timed_case("rms", "c", 1, s)};
  CaseRecord skipped = timed_case("rms", "c", 1, s, Disposition::skipped);
  skipped.timing.reset();  // a skipped case has no timing, hence no samples: not a problem
  next.cases = {timed_case("rms", "a", 1, s), timed_case("rms", "b", 1, s), skipped};
  CompareInputs in;
  in.base = &base;
  in.next = &next;
  in.base_name = "samples/h100-smoke/report.json";
  EXPECT_FALSE(missing_samples_problem(compare_reports(in)));
  base.cases[0].timing->samples_us.clear();
  base.cases[1].timing->samples_us.clear();
  const CompareReport r = compare_reports(in);
  EXPECT_EQ(find_case(r, "a").outcome, CaseOutcome::ambiguous);  // the model still shows the ratio
  EXPECT_NEAR(find_case(r, "a").decision.ratio.ratio, 1.0, 1e-12);
  const auto problem = missing_samples_problem(r);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("samples/h100-smoke/report.json: case rms:a:bf16:1x4096: timing.samples_us is empty (and in "
                          "1 other timed case of that report)"),
            std::string::npos)
      << *problem;
  EXPECT_NE(problem->find("could never call a case slower"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("`kwb run`"), std::string::npos) << *problem;
}

TEST(CompareEnvironment, DifferencesAreListedAndAgreementIsEmpty) {
  const Report h100 = empty_report("NVIDIA H100 80GB HBM3", "dirty");
  EXPECT_TRUE(environment_differences(h100, h100).empty());
  Report h200 = empty_report("NVIDIA H200", "clean");
  h200.run.device->driver_release = "590.10";
  h200.run.settings["preset"] = "precise";
  const auto d = environment_differences(h100, h200);
  std::vector<std::string> what;
  for (const auto& e : d) what.push_back(e.what);
  EXPECT_EQ(what, (std::vector<std::string>{"GPU", "driver", "flush", "preset"}));
  EXPECT_EQ(d[0].base, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d[0].next, "NVIDIA H200");
}

TEST(CompareEnvironment, AReportTimedWithTheTestSlowdownOnSaysSo) {
  const Report base = empty_report();
  Report slowed = empty_report();
  slowed.run.settings["test_slowdown"] = "rmsnorm_fwd:fused_v2_vec16 +5% (on purpose, KWB_TEST_SLOWDOWN)";
  const auto d = environment_differences(base, slowed);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].what, "test slowdown");
  EXPECT_EQ(d[0].base, "off");
  EXPECT_NE(d[0].next.find("+5%"), std::string::npos);
}

// A graph-replay report against a stream one: the difference is named (and --strict-env refuses
// it); a report written before launches were recorded is a stream report.
TEST(CompareEnvironment, GraphAndStreamLaunchesAreAnEnvironmentDifference) {
  const Report older = empty_report();  // no launch recorded
  Report stream = empty_report(), graph = empty_report();
  stream.run.settings["launch"] = "stream";
  graph.run.settings["launch"] = "graph";
  EXPECT_TRUE(environment_differences(older, stream).empty());
  const auto d = environment_differences(stream, graph);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].what, "launch");
  EXPECT_EQ(d[0].base, "stream");
  EXPECT_EQ(d[0].next, "graph");
  // Without the setting, the cases say how they were launched.
  Report replayed = empty_report();
  replayed.cases = {timed_case("x", "a", 1, {1, 2, 3})};
  replayed.cases[0].timing->launch = LaunchKind::graph;
  ASSERT_EQ(environment_differences(older, replayed).size(), 1u);
  EXPECT_EQ(environment_differences(older, replayed)[0].next, "graph");
}

TEST(CompareEnvironment, SettingsMissingFromTheRunAreTakenFromTheCases) {
  Report cold = empty_report(), hot = empty_report();
  cold.run.settings.clear();
  hot.run.settings.clear();
  cold.cases = {timed_case("x", "a", 1, {1, 2, 3})};
  hot.cases = cold.cases;
  hot.cases[0].timing->mode = Mode::hot;
  hot.cases[0].timing->flush = "none";
  const auto d = environment_differences(cold, hot);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].what, "mode");
  EXPECT_EQ(d[0].base, "cold");
  EXPECT_EQ(d[0].next, "hot");
  EXPECT_EQ(d[1].what, "flush");
  // And the comparison carries them.
  EXPECT_EQ(compare(cold, hot).environment.size(), 2u);
}

}  // namespace
}  // namespace kwb
