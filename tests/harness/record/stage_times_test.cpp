// A run's time report: each case's stage times and the session's stages go out with the report
// and come back exactly; a report written before they were recorded reads without them; the
// breakdown sums the stages over the cases and shares them against the session's wall time.
#include <gtest/gtest.h>

#include "harness/record/json_report.hpp"
#include "harness/record/record_json.hpp"
#include "harness/record/stage_times.hpp"
#include "tests/support/report_test_support.hpp"

namespace kwb {
namespace {

using Json = nlohmann::ordered_json;

CaseStageTimes some_stages(double scale) {
  CaseStageTimes s;
  s.setup_ms = 0.25 * scale;
  s.inputs_ms = 1.5 * scale;
  s.oracle_ms = 1234.5 * scale;
  s.prepare_ms = 0.125 * scale;
  s.verify_ms = 7.75 * scale;
  s.measure_ms = 512.0 * scale;
  s.counters_ms = 3.0 * scale;
  s.isolation_ms = 0.5 * scale;
  s.overhead_ms = 2.0 * scale;
  return s;
}

TEST(StageTimes, GoOutWithTheReportAndComeBackExactly) {
  Report report = test::rich_report();
  ASSERT_GE(report.cases.size(), 2u);
  report.cases[0].stages = some_stages(1.0);
  report.cases[1].stages.reset();
  report.run.session_stages_s = {{"start workers", 1.25}, {"ceilings", 3.5}, {"cases", 600.75}};
  const Report back = report_from_json(Json::parse(report_to_json(report).dump()));
  ASSERT_TRUE(back.cases[0].stages.has_value());
  const CaseStageTimes& a = *report.cases[0].stages;
  const CaseStageTimes& b = *back.cases[0].stages;
  EXPECT_EQ(a.setup_ms, b.setup_ms);
  EXPECT_EQ(a.inputs_ms, b.inputs_ms);
  EXPECT_EQ(a.oracle_ms, b.oracle_ms);
  EXPECT_EQ(a.prepare_ms, b.prepare_ms);
  EXPECT_EQ(a.verify_ms, b.verify_ms);
  EXPECT_EQ(a.measure_ms, b.measure_ms);
  EXPECT_EQ(a.counters_ms, b.counters_ms);
  EXPECT_EQ(a.isolation_ms, b.isolation_ms);
  EXPECT_EQ(a.overhead_ms, b.overhead_ms);
  EXPECT_FALSE(back.cases[1].stages.has_value());
  EXPECT_EQ(back.run.session_stages_s, report.run.session_stages_s);
}

TEST(StageTimes, AReportWithoutThemReadsWithout) {
  Json j = report_to_json(test::rich_report());
  for (auto& c : j["cases"]) c.erase("stages");
  j["run"].erase("session_stages");
  const Report back = report_from_json(j);
  for (const auto& c : back.cases) EXPECT_FALSE(c.stages.has_value());
  EXPECT_TRUE(back.run.session_stages_s.empty());
}

TEST(StageTimes, AMalformedStageNamesItsPath) {
  Report report = test::rich_report();
  report.cases[0].stages = some_stages(1.0);
  Json j = report_to_json(report);
  j["cases"][0]["stages"]["oracle_ms"] = "slow";
  try {
    report_from_json(j);
    FAIL() << "expected ReportError";
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find("cases[0].stages.oracle_ms"), std::string::npos) << e.what();
  }
}

TEST(TimeReport, SumsTheCasesStagesAndSharesThemAgainstTheWallTime) {
  std::vector<CaseRecord> cases(3);
  cases[0].stages = some_stages(1.0);  // the first of its group: inputs and oracle
  cases[1].stages = some_stages(2.0);
  cases[1].stages->inputs_ms = 0;  // the same group: nothing prepared
  cases[1].stages->oracle_ms = 0;
  // cases[2]: no stage times (a case the worker never answered)
  const TimeReport r = time_report({{"start workers", 2.0}, {"cases", 8.0}}, cases);
  EXPECT_DOUBLE_EQ(r.wall_s, 10.0);
  EXPECT_EQ(r.cases_with_stages, 2);
  EXPECT_EQ(r.groups_prepared, 1);
  const auto seconds = [&](const std::string& stage) {
    for (const auto& line : r.cases)
      if (line.stage == stage) return line.seconds;
    ADD_FAILURE() << "no stage " << stage;
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(seconds("oracle"), 1.2345);
  EXPECT_DOUBLE_EQ(seconds("measure"), 1.536);
  EXPECT_DOUBLE_EQ(seconds("inputs"), 0.0015);
  const std::string text = format_time_report(r);
  EXPECT_NE(text.find("10.0 s of wall time"), std::string::npos) << text;
  EXPECT_NE(text.find("start workers"), std::string::npos) << text;
  EXPECT_NE(text.find("80.0%"), std::string::npos) << text;  // cases: 8 of 10 s
  EXPECT_NE(text.find("oracle"), std::string::npos) << text;
  EXPECT_NE(text.find("1 input groups prepared"), std::string::npos) << text;
}

// By op, the longest first, with how many cases read their oracle from the cache; past
// kTimeReportOps ops the rest share one line.
TEST(TimeReport, BreaksTheCasesDownByOpLongestFirstWithTheirCacheHits) {
  std::vector<CaseRecord> cases;
  const auto add = [&](const std::string& op, double oracle_ms, double measure_ms, const std::string& source) {
    CaseRecord c;
    c.op = op;
    c.stages = CaseStageTimes{};
    c.stages->oracle_ms = oracle_ms;
    c.stages->measure_ms = measure_ms;
    c.stages->oracle_background_ms = 500;
    c.verify = VerifyResult{};
    c.verify->oracle_source = source;
    cases.push_back(c);
  };
  add("softmax_fwd", 1000, 2000, "cache");
  add("softmax_fwd", 0, 2000, "cache");
  add("cross_entropy", 9000, 1000, "computed");
  add("rmsnorm_fwd", 0, 500, "computed");
  const TimeReport r = time_report({{"cases", 20.0}}, cases);
  ASSERT_EQ(r.ops.size(), 3u);
  EXPECT_EQ(r.ops[0].op, "cross_entropy");
  EXPECT_DOUBLE_EQ(r.ops[0].total_s, 10.0) << "the background oracle is not wall time";
  EXPECT_EQ(r.ops[1].op, "softmax_fwd");
  EXPECT_EQ(r.ops[1].cases, 2);
  EXPECT_DOUBLE_EQ(r.ops[1].oracle_s, 1.0);
  EXPECT_DOUBLE_EQ(r.ops[1].measure_s, 4.0);
  EXPECT_DOUBLE_EQ(r.ops[1].oracle_background_s, 1.0);
  EXPECT_EQ(r.ops[1].oracle_from_cache, 2);
  EXPECT_EQ(r.ops[2].op, "rmsnorm_fwd");
  const std::string text = format_time_report(r);
  EXPECT_NE(text.find("by op"), std::string::npos) << text;
  EXPECT_LT(text.find("cross_entropy"), text.find("softmax_fwd")) << text;
  EXPECT_NE(text.find(" 2/2\n"), std::string::npos) << "softmax's cache hits: " << text;
  EXPECT_NE(text.find(" 0/1\n"), std::string::npos) << text;

  for (int i = 0; i < 10; ++i) add("op_" + std::to_string(i), 0, 10.0 * (i + 1), "computed");
  const std::string many = format_time_report(time_report({{"cases", 20.0}}, cases));
  EXPECT_NE(many.find("(5 other ops)"), std::string::npos) << many;  // 13 ops, 8 listed
  EXPECT_EQ(many.find("op_0 "), std::string::npos) << "the shortest op has a line of its own: " << many;
}

}  // namespace
}  // namespace kwb
