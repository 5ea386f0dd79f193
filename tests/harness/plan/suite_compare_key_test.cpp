// The suite's `compare: {fail_on: [...]}` key: read into the struct and the report's run.suite
// (so that a compare against a run of the suite applies it), refused with its place when
// malformed, and set by the nightly suite.
#include <gtest/gtest.h>

#include <filesystem>

#include "harness/plan/suite_file.hpp"
#include "harness/plan/suite_plan.hpp"
#include "harness/record/json_report.hpp"
#include "tests/harness/plan/suite_test_support.hpp"
#include "tests/support/mentions.hpp"

namespace kwb {
namespace {

using test::At;
using test::Mentions;
using test::suite_error;
using test::yaml_lines;

TEST(SuiteCompareKey, FailOnIsReadIntoTheSuiteAndItsReportInfo) {
  const SuiteFile s = parse_suite(
      yaml_lines({"name: t", "compare: {fail_on: [missing, skipped]}", "entries: [{ops: rmsnorm_fwd}]"}), "t.yaml");
  EXPECT_EQ(s.compare_fail_on, (std::vector<FailOnClass>{FailOnClass::missing, FailOnClass::skipped}));
  const SuiteInfo info = suite_info(s, Registry::instance());
  EXPECT_EQ(info.compare_fail_on, s.compare_fail_on);
  // One name alone is a list of one.
  EXPECT_EQ(parse_suite(yaml_lines({"name: t", "compare: {fail_on: ambiguous}", "entries: [{ops: rmsnorm_fwd}]"}), "t")
                .compare_fail_on,
            std::vector<FailOnClass>{FailOnClass::ambiguous});
  // Left out: nothing besides slower and failed cases.
  EXPECT_TRUE(parse_suite(yaml_lines({"name: t", "entries: [{ops: rmsnorm_fwd}]"}), "t").compare_fail_on.empty());
}

TEST(SuiteCompareKey, RoundTripsThroughTheReportAndIsAbsentWhenUnset) {
  Report r;
  r.run.tool_version = "0.1.0";
  r.run.started_at = r.run.finished_at = "2026-11-25T00:00:00Z";
  r.run.suite = SuiteInfo{.name = "nightly", .path = "suites/nightly.yaml", .default_threshold = 0.03};
  EXPECT_FALSE(report_to_json(r).at("run").at("suite").contains("compare")) << "unset: the report is as before";
  r.run.suite->compare_fail_on = {FailOnClass::missing, FailOnClass::skipped};
  const auto j = report_to_json(r);
  EXPECT_EQ(j.at("run").at("suite").at("compare").at("fail_on").dump(), R"(["missing","skipped"])");
  const Report back = report_from_json(nlohmann::ordered_json::parse(j.dump()));
  EXPECT_EQ(back.run.suite->compare_fail_on, r.run.suite->compare_fail_on);

  auto bad = nlohmann::ordered_json::parse(j.dump());
  bad["run"]["suite"]["compare"]["fail_on"][1] = "slow";
  try {
    report_from_json(bad);
    FAIL() << "an unknown class must be refused";
  } catch (const ReportError& e) {
    EXPECT_TRUE(Mentions(e.what(), "run.suite.compare.fail_on[1]")) << e.what();
    EXPECT_TRUE(Mentions(e.what(), "ambiguous, missing, skipped")) << e.what();
  }
}

TEST(SuiteCompareKeyErrors, UnknownClassIsPointedAtWithTheChoices) {
  const auto e = suite_error(
      yaml_lines({"name: t", "compare: {fail_on: [missing, ambigous]}", "entries: [{ops: rmsnorm_fwd}]"}));
  EXPECT_TRUE(At(e, 2, 30, "compare.fail_on[1]"));
  EXPECT_TRUE(Mentions(e->what(), "unknown fail-on class 'ambigous' (did you mean 'ambiguous'?)"));
}

TEST(SuiteCompareKeyErrors, UnknownKeyRepeatsAndPlacementAreRefused) {
  auto e = suite_error(yaml_lines({"name: t", "compare: {failon: [missing]}", "entries: [{ops: rmsnorm_fwd}]"}));
  EXPECT_TRUE(At(e, 2, 11, "compare.failon"));
  EXPECT_TRUE(Mentions(e->what(), "did you mean 'fail_on'?"));

  e = suite_error(yaml_lines({"name: t", "compare: {fail_on: [missing, missing]}", "entries: [{ops: rmsnorm_fwd}]"}));
  EXPECT_TRUE(At(e, 2, 30, "compare.fail_on[1]"));
  EXPECT_TRUE(Mentions(e->what(), "listed twice"));

  e = suite_error(yaml_lines({"name: t", "compare: missing", "entries: [{ops: rmsnorm_fwd}]"}));
  EXPECT_TRUE(At(e, 2, 10, "compare"));
  EXPECT_TRUE(Mentions(e->what(), "{fail_on: [missing, skipped]}"));

  e = suite_error(yaml_lines({"name: t", "compare: {}", "entries: [{ops: rmsnorm_fwd}]"}));
  EXPECT_TRUE(At(e, 2, 10, "compare"));
  EXPECT_TRUE(Mentions(e->what(), "names nothing"));

  e = suite_error(yaml_lines({"name: t", "entries:", "  - ops: rmsnorm_fwd", "    compare: {fail_on: missing}"}));
  EXPECT_TRUE(At(e, 4, 5, "entries[0].compare"));
  EXPECT_TRUE(Mentions(e->what(), "suite-level setting"));
}

TEST(SuiteCompareKey, NightlyFailsOnMissingAndSkippedButNotAmbiguous) {
  const SuiteFile s = load_suite(std::filesystem::path(KWB_SOURCE_DIR) / "suites" / "nightly.yaml");
  EXPECT_EQ(s.compare_fail_on, (std::vector<FailOnClass>{FailOnClass::missing, FailOnClass::skipped}));
}

}  // namespace
}  // namespace kwb
