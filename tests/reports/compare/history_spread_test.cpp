// Run-to-run spread from the result history's rows: only stored runs of BASE's build measured
// alike count (same git SHA, GPU, driver, mode, flush, preset, launch), BASE's own row is left out, and both
// sources of spread merge per case (the larger spread, the runs added up).
#include <gtest/gtest.h>

#include "reports/compare/history_spread.hpp"
#include "tests/reports/compare/compare_test_support.hpp"

namespace kwb {
namespace {

constexpr const char* kRms = "rms:a:bf16:1x4096";
constexpr const char* kSettings = "mode cold, flush dirty, preset default";

Report base_report() {
  Report r = test::empty_report();  // git SHA "abc", an H100, cold / dirty / default
  r.run.started_at = "2026-11-25T01:00:00Z";
  r.cases = {test::timed_case("rms", "a", 1, test::noisy_samples(1, 51, 100.0, 0.001))};
  r.cases[0].timing->span.median = 100.0;
  return r;
}

history::TrendRow row(const std::string& started_at, double median_us, const std::string& sha = "abc",
                      const std::string& gpu = "NVIDIA H100 80GB HBM3", const std::string& settings = kSettings) {
  history::TrendRow r;
  r.identity = kRms;
  r.started_at = started_at;
  r.git_sha = sha;
  r.device_name = gpu;
  r.settings = settings;
  r.driver = history::driver_label(base_report().run.device.value_or(DeviceInfo{}));
  r.median_us = median_us;
  return r;
}

TEST(CompareHistorySpread, StoredRunsOnAnotherDriverDoNotWidenTheBand) {
  const Report base = base_report();
  history::TrendRow other = row("2026-11-24T01:00:00Z", 130.0);
  other.driver = "999.99.99";
  const HistorySpread h = history_spread(base, {other});
  EXPECT_EQ(h.spreads.count(kRms), 0u);
  EXPECT_EQ(h.runs, 0);
}

TEST(CompareHistorySpread, StoredRunsOfBaseBuildGiveTheLargestMedianDifference) {
  const Report base = base_report();
  const HistorySpread h = history_spread(base, {row("2026-11-24T01:00:00Z", 103.0), row("2026-11-23T01:00:00Z", 95.0)});
  ASSERT_EQ(h.spreads.count(kRms), 1u);
  EXPECT_NEAR(h.spreads.at(kRms).spread, 0.05, 1e-12);
  EXPECT_EQ(h.spreads.at(kRms).runs, 2);
  EXPECT_EQ(h.runs, 2);
}

TEST(CompareHistorySpread, OtherBuildsGpusSettingsBaseItselfAndUntimedRowsAreLeftOut) {
  const Report base = base_report();
  history::TrendRow untimed = row("2026-11-20T01:00:00Z", 0);
  untimed.median_us.reset();
  const HistorySpread h = history_spread(base, {row("2026-11-24T01:00:00Z", 150.0, "def"),
                                                row("2026-11-24T02:00:00Z", 150.0, "abc", "NVIDIA H200"),
                                                row("2026-11-24T03:00:00Z", 150.0, "abc", "NVIDIA H100 80GB HBM3",
                                                    "mode hot, flush none, preset default"),
                                                row("2026-11-25T01:00:00Z", 150.0),  // BASE's own row
                                                untimed});
  EXPECT_TRUE(h.spreads.empty());
  EXPECT_EQ(h.runs, 0);
}

// Stored graph replays are not stream runs of the same case, and the reverse.
TEST(CompareHistorySpread, RunsLaunchedTheOtherWayAreLeftOut) {
  const Report stream = base_report();
  const std::string graph_settings = std::string(kSettings) + ", launch graph";
  EXPECT_TRUE(history_spread(stream, {row("2026-11-24T01:00:00Z", 60.0, "abc", "NVIDIA H100 80GB HBM3",
                                          graph_settings)}).spreads.empty());
  Report graph = base_report();
  graph.run.settings["launch"] = "graph";
  EXPECT_TRUE(history_spread(graph, {row("2026-11-24T01:00:00Z", 130.0)}).spreads.empty());
  const HistorySpread h =
      history_spread(graph, {row("2026-11-24T01:00:00Z", 102.0, "abc", "NVIDIA H100 80GB HBM3", graph_settings)});
  ASSERT_EQ(h.spreads.count(kRms), 1u);
  EXPECT_NEAR(h.spreads.at(kRms).spread, 0.02, 1e-12);
}

TEST(CompareHistorySpread, BothSourcesMergePerCase) {
  std::map<std::string, CaseSpread> spreads = {{"x", {0.02, 1}}, {"y", {0.05, 2}}};
  add_spreads(spreads, {{"x", {0.04, 3}}, {"z", {0.01, 1}}});
  EXPECT_DOUBLE_EQ(spreads.at("x").spread, 0.04);
  EXPECT_EQ(spreads.at("x").runs, 4);
  EXPECT_DOUBLE_EQ(spreads.at("y").spread, 0.05);
  EXPECT_EQ(spreads.at("z").runs, 1);
}

}  // namespace
}  // namespace kwb
