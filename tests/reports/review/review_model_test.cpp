// The review model: grouping by op, one roofline point per timed case, the ceilings, sweeps
// and findings, from hand-made records.
#include <gtest/gtest.h>

#include "reports/review/review_charts.hpp"

#include <random>

#include "reports/review/review_model.hpp"
#include "tests/reports/review/review_test_support.hpp"

namespace kwb {
namespace {

using test::CaseSpec;
using test::make_case;

TEST(ReviewModel, GroupsCasesByOpInFirstSeenOrderWithOnePointPerTimedCase) {
  // 1. Prepare: two ops interleaved, one skipped case without timing.
  std::vector<CaseRecord> cases = {
      make_case({.op = "softmax_fwd", .variant = "fused_v1"}),
      make_case({.op = "rmsnorm_fwd", .variant = "baseline", .role = Role::baseline, .median_us = 40}),
      make_case({.op = "rmsnorm_fwd", .variant = "fused_v1", .median_us = 10}),
      make_case({.op = "softmax_fwd", .variant = "fused_v2"}),
  };
  CaseRecord skipped = make_case({.op = "rmsnorm_fwd", .variant = "fused_v9"});
  skipped.timing.reset();
  skipped.derived.reset();
  skipped.disposition = Disposition::skipped;
  skipped.reason = "needs cols % 8 == 0";
  cases.push_back(skipped);
  // 2. Run.
  const review::ReviewModel m = review::build_review_model(test::sample_run(), cases);
  // 3. Verify.
  ASSERT_EQ(m.ops, (std::vector<std::string>{"softmax_fwd", "rmsnorm_fwd"}));
  ASSERT_EQ(m.groups.size(), 2u);
  EXPECT_EQ(m.groups[0].rows.size(), 2u);
  EXPECT_EQ(m.groups[1].rows.size(), 3u);
  EXPECT_FALSE(m.groups[1].rows[2].timed);
  EXPECT_EQ(m.groups[1].rows[2].disposition, "skipped: needs cols % 8 == 0");
  EXPECT_EQ(m.points.size(), 4u);  // the skipped case has no point
  EXPECT_EQ(m.cases_total, 5);
  EXPECT_EQ(m.cases_skipped, 1);
  ASSERT_EQ(m.speedups.size(), 1u);
  EXPECT_NEAR(m.speedups[0].speedup, 4.0, 1e-12);
}

TEST(ReviewModel, RooflinePointsCarryTheCaseIntensityAndRate) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> us(1, 1000), ai(0.05, 200);
  std::vector<CaseRecord> cases;
  for (int i = 0; i < 20; ++i)
    cases.push_back(make_case({.variant = "v" + std::to_string(i), .median_us = us(rng), .intensity = ai(rng)}));
  const review::ReviewModel m = review::build_review_model(test::sample_run(), cases);
  ASSERT_EQ(m.points.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(m.points[i].case_name, cases[i].nvtx_range);
    EXPECT_DOUBLE_EQ(m.points[i].intensity, cases[i].derived->intensity);
    EXPECT_DOUBLE_EQ(m.points[i].tflops, cases[i].derived->tflops);
  }
}

TEST(ReviewModel, MeasuredAndDatasheetCeilingsAreBothListedAndMarked) {
  const review::ReviewModel m = review::build_review_model(test::sample_run(), {});
  int measured = 0, datasheet = 0, bandwidth = 0;
  for (const auto& c : m.ceilings) {
    (c.measured ? measured : datasheet)++;
    bandwidth += c.kind == review::RooflineCeiling::Kind::bandwidth;
  }
  EXPECT_EQ(measured, 4);   // DRAM, L2, fp32, bf16 tensor
  EXPECT_EQ(datasheet, 3);  // DRAM, fp32, bf16 tensor (no L2 figure on a datasheet)
  EXPECT_EQ(bandwidth, 3);
  EXPECT_NE(m.ceilings[0].label.find("DRAM copy 3000 GB/s (measured)"), std::string::npos);
}

TEST(ReviewModel, DatasheetDerivedReportDoesNotDrawTheDatasheetRoofsTwice) {
  RunInfo run = test::sample_run();
  run.ceilings = run.datasheet_ceilings;
  const review::ReviewModel m = review::build_review_model(run, {});
  EXPECT_EQ(m.ceilings.size(), 3u);
  for (const auto& c : m.ceilings) EXPECT_FALSE(c.measured) << c.label;
}

TEST(ReviewModel, SweepChartFollowsTheAxisWithTheOtherAxesFixed) {
  std::vector<CaseRecord> cases;
  for (std::int64_t cols : {512, 1024, 4096, 16384})
    for (const char* v : {"fused_v1", "fused_v2"})
      cases.push_back(make_case({.variant = v, .rows = 16384, .cols = cols, .median_us = cols / 100.0}));
  // Rows vary at one fixed cols value only twice: no rows chart.
  cases.push_back(make_case({.variant = "fused_v1", .rows = 1024, .cols = 4096}));
  const auto sweeps = review::sweep_charts(cases);
  ASSERT_EQ(sweeps.size(), 1u);
  const review::SweepChart& s = sweeps[0];
  EXPECT_EQ(s.axis, "cols");
  EXPECT_EQ(s.fixed, "rows=16384");
  EXPECT_EQ(s.metric, "GB/s");
  EXPECT_TRUE(s.log_x);  // 512..16384 spans 32x
  ASSERT_EQ(s.series.size(), 2u);
  EXPECT_EQ(s.series[0].variant, "fused_v1");
  ASSERT_EQ(s.series[0].points.size(), 4u);
  EXPECT_EQ(s.series[0].points.front().first, 512);
  EXPECT_EQ(s.series[0].points.back().first, 16384);
}

// The chart carries each swept shape's roof in its metric: the DRAM roof at that shape's mix for a
// cold GB/s chart (none for hot cases, which no DRAM roof bounds), and the SVG draws it dashed.
TEST(ReviewModel, SweepChartCarriesTheRoofOfEachShape) {
  std::vector<CaseRecord> cases;
  for (std::int64_t cols : {512, 1024, 4096, 16384})
    for (const char* v : {"fused_v1", "fused_v2"}) {
      CaseRecord c = make_case({.variant = v, .rows = 16384, .cols = cols, .median_us = cols / 100.0});
      c.timing->mode = Mode::cold;
      c.derived->bandwidth_roof_gbps = cols < 4096 ? 3100 : 3200;
      cases.push_back(c);
    }
  const auto sweeps = review::sweep_charts(cases);
  ASSERT_EQ(sweeps.size(), 1u);
  const std::vector<std::pair<double, double>> expected = {{512, 3100}, {1024, 3100}, {4096, 3200}, {16384, 3200}};
  EXPECT_EQ(sweeps[0].roof, expected);
  EXPECT_EQ(sweeps[0].roof_label, "DRAM roof at each shape's read/write mix");
  const std::string svg = review::sweep_svg(sweeps[0]);
  EXPECT_NE(svg.find("DRAM roof at each shape&#39;s read/write mix"), std::string::npos) << svg;
  EXPECT_NE(svg.find("stroke=\"#808080\" stroke-width=\"1.5\" stroke-dasharray"), std::string::npos) << svg;

  for (CaseRecord& c : cases) c.timing->mode = Mode::hot;
  EXPECT_TRUE(review::sweep_charts(cases)[0].roof.empty()) << "a hot case has no DRAM roof";
}

// A variant with tunables is a series of the chart too (the tunables once made a slice of their
// own, which the choice of slice then dropped: only the baseline was drawn), and where a tuning
// sweep gives it several cases at one point, the fastest is plotted and named.
TEST(ReviewModel, SweepChartKeepsVariantsWithTunablesAndPlotsTheFastestSetting) {
  std::vector<CaseRecord> cases;
  for (std::int64_t cols : {1024, 4096, 16384}) {
    cases.push_back(make_case({.variant = "baseline", .role = Role::baseline, .rows = 16384, .cols = cols,
                               .median_us = cols / 50.0}));
    for (int block : {256, 512}) {
      CaseRecord c = make_case({.variant = "fused_v3", .rows = 16384, .cols = cols,
                                .median_us = cols / (block == 512 ? 200.0 : 100.0)});
      c.tunables = {{"block", block}};
      cases.push_back(c);
    }
  }
  const auto sweeps = review::sweep_charts(cases);
  ASSERT_EQ(sweeps.size(), 1u);
  const review::SweepChart& s = sweeps[0];
  EXPECT_EQ(s.fixed, "rows=16384");  // the tunables are not part of the slice
  ASSERT_EQ(s.series.size(), 2u);
  EXPECT_EQ(s.series[0].variant, "baseline");
  EXPECT_EQ(s.series[1].variant, "fused_v3");
  ASSERT_EQ(s.series[1].points.size(), 3u);
  for (std::size_t p = 0; p < 3; ++p) {
    const CaseRecord& plotted = cases[s.series[1].cases[p]];
    EXPECT_EQ(plotted.variant, "fused_v3");
    EXPECT_EQ(to_assignments(plotted.tunables), "block=512");  // the faster setting
    EXPECT_EQ(s.series[1].tunables[p], "block=512");
    EXPECT_DOUBLE_EQ(s.series[1].points[p].second, plotted.derived->bandwidth_gbps);
  }
  EXPECT_EQ(s.series[0].tunables[0], "");
}

TEST(ReviewModel, NarrowComputeBoundSweepUsesLinearAxisAndTflops) {
  std::vector<CaseRecord> cases;
  for (std::int64_t cols : {1024, 2048, 4096})
    cases.push_back(make_case({.op = "gemm", .cols = cols, .intensity = 100, .bound = "compute"}));
  const auto sweeps = review::sweep_charts(cases);
  ASSERT_EQ(sweeps.size(), 1u);
  EXPECT_EQ(sweeps[0].metric, "TFLOP/s");
  EXPECT_FALSE(sweeps[0].log_x);  // 4x
}

TEST(ReviewModel, FindingsNameFailedAboveCeilingThrottledAndNoisyCases) {
  CaseRecord failed = make_case({.variant = "bad", .disposition = Disposition::failed});
  CaseRecord fast = make_case({.variant = "too_fast", .median_us = 1});  // 67 GB in 1 us: > copy
  CaseRecord throttled = make_case({.variant = "hot_gpu"});
  throttled.timing->clocks = ClockSummary{1400, 1980, 1980, 10, 100, 40, {"hw_thermal_slowdown"}};
  CaseRecord noisy = make_case({.variant = "jittery"});
  noisy.timing->stop_reason = StopReason::time_limit;
  const review::ReviewModel m = review::build_review_model(test::sample_run(), {failed, fast, throttled, noisy});
  std::map<std::string, std::string> by_kind;
  for (const auto& f : m.findings) by_kind[f.kind] += f.case_name + " " + f.detail + ";";
  EXPECT_NE(by_kind["failed"].find("bad"), std::string::npos);
  EXPECT_NE(by_kind["above ceiling"].find("too_fast"), std::string::npos);
  EXPECT_NE(by_kind["throttled"].find("hw_thermal_slowdown"), std::string::npos);
  EXPECT_NE(by_kind["noisy"].find("jittery"), std::string::npos);
  EXPECT_EQ(m.cases_failed, 1);
  EXPECT_EQ(m.groups[0].rows[2].flags, "throttled");
}

TEST(ReviewModel, GraphReplaysAreFlaggedBesideTheMode) {
  CaseRecord graph = make_case({.variant = "replayed"});
  graph.timing->launch = LaunchKind::graph;
  const review::ReviewModel m = review::build_review_model(test::sample_run(), {make_case({}), graph});
  EXPECT_EQ(m.groups[0].rows[0].flags, "");
  EXPECT_EQ(m.groups[0].rows[1].flags, "graph");
}

}  // namespace
}  // namespace kwb
