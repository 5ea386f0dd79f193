// What --confirm re-measures and how: the suspects, the settings both reports must share, the
// request rebuilt from BASE's record and settings, and each side's test slowdown switch.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "harness/worker/test_slowdown.hpp"
#include "reports/compare/confirm_plan.hpp"
#include "tests/reports/compare/compare_test_support.hpp"

namespace kwb {
namespace {

Report report_with(const std::string& preset, const std::string& seed = "7") {
  Report r = test::empty_report();
  r.run.settings["preset"] = preset;
  r.run.settings["seed"] = seed;
  r.cases = {test::timed_case("rmsnorm_fwd", "fused_v2_vec16", 4096, test::noisy_samples(1, 20, 30.0, 0.01))};
  r.cases[0].tunables = {{"block", 256}};
  return r;
}

TEST(ConfirmPlan, SuspectsAreSlowerFasterAndAmbiguousCasesOnly) {
  CompareReport r;
  const CaseOutcome outcomes[] = {CaseOutcome::failed, CaseOutcome::slower, CaseOutcome::faster,
                                  CaseOutcome::ambiguous, CaseOutcome::same, CaseOutcome::not_timed};
  for (CaseOutcome o : outcomes) {
    ComparedCase c;
    c.key = std::string(to_string(o));
    c.outcome = o;
    r.cases.push_back(c);
  }
  EXPECT_EQ(suspect_keys(r), (std::vector<std::string>{"slower", "faster", "ambiguous"}));
}

TEST(ConfirmPlan, SettingsThatDecideAMeasurementMustAgree) {
  EXPECT_FALSE(confirm_settings_problem(report_with("default"), report_with("default"), "a.json", "b.json"));
  const auto preset = confirm_settings_problem(report_with("default"), report_with("quick"), "a.json", "b.json");
  ASSERT_TRUE(preset);
  EXPECT_NE(preset->find("preset: BASE default, NEW quick"), std::string::npos) << *preset;
  EXPECT_NE(preset->find("a.json and b.json"), std::string::npos) << *preset;
  EXPECT_NE(preset->find("drop --confirm"), std::string::npos) << "says how to fix it: " << *preset;
  const auto seed = confirm_settings_problem(report_with("default", "1"), report_with("default", "2"), "a", "b");
  ASSERT_TRUE(seed);
  EXPECT_NE(seed->find("seed: BASE 1, NEW 2"), std::string::npos) << *seed;
  Report clean = report_with("default");
  clean.run.settings["flush"] = "clean";
  EXPECT_TRUE(confirm_settings_problem(report_with("default"), clean, "a", "b"));
  Report other_timer = report_with("default");
  other_timer.run.settings["timer"] = "cuda_events";  // re-measured under one timer anyway
  EXPECT_FALSE(confirm_settings_problem(report_with("default"), other_timer, "a", "b"));
}

TEST(ConfirmPlan, RequestIsBasesCaseUnderBasesSettings) {
  const Report base = report_with("quick", "42");
  const CaseRequest r = confirm_request(base.cases[0], base, "base.json", 3);
  EXPECT_EQ(r.index, 3);
  EXPECT_EQ(r.op, "rmsnorm_fwd");
  EXPECT_EQ(r.variant, "fused_v2_vec16");
  EXPECT_EQ(r.dtype, DType::bf16);
  EXPECT_EQ(r.shape.to_compact(), "4096x4096");
  ASSERT_EQ(r.tunables.size(), 1u);
  EXPECT_EQ(r.tunables[0].second, 256);
  EXPECT_EQ(r.mode, Mode::cold);
  EXPECT_EQ(r.flush, FlushKind::dirty);
  EXPECT_EQ(r.preset, "quick");
  EXPECT_EQ(r.seed, 42u);
  EXPECT_TRUE(r.include_test_variants);
}

TEST(ConfirmPlan, GraphReplaysAreReMeasuredAsGraphReplaysAndNotAgainstStreamLaunches) {
  Report graph = report_with("default");
  graph.run.settings["launch"] = "graph";
  const auto problem = confirm_settings_problem(report_with("default"), graph, "a", "b");
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("launch: BASE stream, NEW graph"), std::string::npos) << *problem;
  EXPECT_EQ(confirm_request(graph.cases[0], graph, "a", 0).launch, LaunchKind::graph);
  EXPECT_EQ(confirm_request(graph.cases[0], report_with("default"), "a", 0).launch, LaunchKind::stream);
}

TEST(ConfirmPlan, RequestWithoutARecordedSeedIsRefused) {
  Report base = report_with("default");
  base.run.settings.erase("seed");
  try {
    confirm_request(base.cases[0], base, "base.json", 0);
    FAIL() << "no seed: the inputs could not be drawn as they were";
  } catch (const ReportError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("base.json: --confirm: the report does not record its seed"), std::string::npos) << m;
  }
}

TEST(ConfirmPlan, TestSlowdownIsReadBackAsTheSwitchsValue) {
  Report r = report_with("default");
  EXPECT_FALSE(test_slowdown_of(r, "r.json")) << "the switch was off";
  r.run.settings["test_slowdown"] = "rmsnorm_fwd:fused_v2_vec16 +5% (on purpose, KWB_TEST_SLOWDOWN)";
  const auto value = test_slowdown_of(r, "r.json");
  ASSERT_TRUE(value);
  EXPECT_EQ(*value, "rmsnorm_fwd:fused_v2_vec16:0.05");
  const TestSlowdown parsed = parse_test_slowdown(*value);  // what the worker will read
  EXPECT_EQ(parsed.op, "rmsnorm_fwd");
  EXPECT_EQ(parsed.variant, "fused_v2_vec16");
  EXPECT_DOUBLE_EQ(parsed.fraction, 0.05);
  r.run.settings["test_slowdown"] = "linear_bias_relu:fused_v4 +2.5% (on purpose, KWB_TEST_SLOWDOWN)";
  EXPECT_EQ(*test_slowdown_of(r, "r.json"), "linear_bias_relu:fused_v4:0.025");
  // Several variants slowed at once (a comma list): each keeps its own fraction.
  r.run.settings["test_slowdown"] =
      "rmsnorm_fwd:fused_v2_vec16 +5%, softmax_fwd:online +2% (on purpose, KWB_TEST_SLOWDOWN)";
  EXPECT_EQ(*test_slowdown_of(r, "r.json"), "rmsnorm_fwd:fused_v2_vec16:0.05,softmax_fwd:online:0.02");
  r.run.settings["test_slowdown"] = "on";
  EXPECT_THROW(test_slowdown_of(r, "r.json"), ReportError);
}

// The report holds the switch's exact value (test_slowdown_value); confirm gives a side's worker
// that, not the 3-digit percentage written for people.
TEST(ConfirmPlan, TestSlowdownIsTheExactValueTheWorkersRan) {
  std::mt19937_64 rng(2512);
  Report r = report_with("default");
  for (int trial = 0; trial < 50; ++trial) {
    const std::vector<TestSlowdown> slowdowns = {
        {"rmsnorm_fwd", "fused_v2_vec16", std::uniform_real_distribution<double>(1e-3, 0.2)(rng)}};
    r.run.settings.clear();
    for (const auto& [key, value] : test_slowdown_settings(slowdowns)) r.run.settings[key] = value;
    const auto value = test_slowdown_of(r, "r.json");
    ASSERT_TRUE(value);
    EXPECT_EQ(parse_test_slowdown(*value).fraction, slowdowns[0].fraction) << *value;
  }
  // 1.2345%: the text for people says +1.23%, the value 0.012345.
  r.run.settings = {{"test_slowdown", "rmsnorm_fwd:fused_v2_vec16 +1.23% (on purpose, KWB_TEST_SLOWDOWN)"},
                    {"test_slowdown_value", "rmsnorm_fwd:fused_v2_vec16:0.012345"}};
  EXPECT_EQ(*test_slowdown_of(r, "r.json"), "rmsnorm_fwd:fused_v2_vec16:0.012345");
  // A value the workers could not have run is refused, naming the setting.
  r.run.settings["test_slowdown_value"] = "rmsnorm_fwd:fused_v2_vec16:5%";
  try {
    test_slowdown_of(r, "r.json");
    FAIL() << "an unreadable value must be refused";
  } catch (const ReportError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("r.json: run.settings.test_slowdown_value"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace kwb
