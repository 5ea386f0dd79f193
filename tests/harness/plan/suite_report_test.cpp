// The suite in report.json: run.suite = {name, path, thresholds: {default, <op>...}} with
// thresholds as fractions, read back strictly, and absent from (older) reports without one.
#include <gtest/gtest.h>

#include "harness/record/json_report.hpp"
#include "tests/support/mentions.hpp"

namespace kwb {
namespace {

using Json = nlohmann::ordered_json;
using test::Mentions;

Report suite_report() {
  Report r;
  r.run.tool_version = "0.1.0";
  r.run.git_sha = "abc";
  r.run.command_line = "kwb run --suite suites/smoke.yaml";
  r.run.host = "h";
  r.run.started_at = r.run.finished_at = "2026-11-22T00:00:00Z";
  r.run.complete = true;
  r.run.suite = SuiteInfo{.name = "smoke", .path = "suites/smoke.yaml", .default_threshold = 0.03,
                          .op_thresholds = {{"rmsnorm_fwd", 0.02}}};
  return r;
}

TEST(SuiteInReport, ThresholdsAreWrittenAsFractionsUnderRunSuiteThresholds) {
  const Json j = report_to_json(suite_report());
  const Json& suite = j.at("run").at("suite");
  EXPECT_EQ(suite.at("name"), "smoke");
  EXPECT_EQ(suite.at("path"), "suites/smoke.yaml");
  EXPECT_DOUBLE_EQ(suite.at("thresholds").at("default").get<double>(), 0.03);
  EXPECT_DOUBLE_EQ(suite.at("thresholds").at("rmsnorm_fwd").get<double>(), 0.02);
  EXPECT_EQ(suite.at("thresholds").begin().key(), "default");  // first, for people reading the file
}

TEST(SuiteInReport, ReadsBackAndReportsWithoutOneStillLoad) {
  const Report back = report_from_json(Json::parse(report_to_json(suite_report()).dump()));
  ASSERT_TRUE(back.run.suite);
  EXPECT_EQ(back.run.suite->name, "smoke");
  EXPECT_EQ(back.run.suite->threshold_for("rmsnorm_fwd"), 0.02);
  EXPECT_EQ(back.run.suite->threshold_for("softmax_fwd"), 0.03);

  Report plain = suite_report();
  plain.run.suite.reset();
  const Json j = report_to_json(plain);
  EXPECT_FALSE(j.at("run").contains("suite"));
  EXPECT_FALSE(report_from_json(j).run.suite.has_value());
}

TEST(SuiteInReport, AMalformedSuiteObjectIsRefusedWithItsPath) {
  Json j = report_to_json(suite_report());
  j["run"]["suite"]["thresholds"].erase("default");
  try {
    report_from_json(j);
    FAIL() << "expected a ReportError";
  } catch (const ReportError& e) {
    EXPECT_TRUE(Mentions(e.what(), "run.suite.thresholds.default: missing required key"));
  }
  j = report_to_json(suite_report());
  j["run"]["suite"]["thresholds"]["rmsnorm_fwd"] = "2%";
  try {
    report_from_json(j);
    FAIL() << "expected a ReportError";
  } catch (const ReportError& e) {
    EXPECT_TRUE(Mentions(e.what(), "run.suite.thresholds.rmsnorm_fwd: expected a number"));
  }
}

}  // namespace
}  // namespace kwb
