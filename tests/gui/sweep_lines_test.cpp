// gui/model/sweep_lines: the review report's sweep slices, in any metric, with their cases.
#include "gui/model/sweep_lines.hpp"

#include <gtest/gtest.h>

#include "gui/model/report_loader.hpp"
#include "tests/gui/gui_test_support.hpp"

namespace kwb::gui {
namespace {

TEST(GuiSweepLines, SameCasesAsTheReviewChartInItsOwnMetric) {
  const LoadOutcome out = load_report(test::kSampleReport);
  ASSERT_TRUE(out.loaded.has_value()) << out.error;
  const auto& cases = out.loaded->report.cases;
  const auto charts = review::sweep_charts(cases);
  ASSERT_FALSE(charts.empty());
  for (const auto& chart : charts) {
    const auto lines = sweep_lines(cases, 0, chart, default_metric(chart));
    ASSERT_EQ(lines.size(), chart.series.size()) << chart.op << " " << chart.axis;
    for (std::size_t s = 0; s < lines.size(); ++s) {
      EXPECT_EQ(lines[s].variant, chart.series[s].variant);
      ASSERT_EQ(lines[s].points.size(), chart.series[s].points.size());
      for (std::size_t p = 0; p < lines[s].points.size(); ++p) {
        EXPECT_DOUBLE_EQ(lines[s].points[p].x, chart.series[s].points[p].first);
        EXPECT_DOUBLE_EQ(lines[s].points[p].y, chart.series[s].points[p].second);
        const CaseRecord& c = cases[lines[s].points[p].ref.index];
        EXPECT_EQ(c.variant, lines[s].variant);  // the point's case is the one plotted
      }
    }
  }
}

TEST(GuiSweepLines, TimeMetricGivesTheMedians) {
  const LoadOutcome out = load_report(test::kSampleReport);
  ASSERT_TRUE(out.loaded.has_value()) << out.error;
  const auto& cases = out.loaded->report.cases;
  const auto charts = review::sweep_charts(cases);
  ASSERT_FALSE(charts.empty());
  for (const auto& line : sweep_lines(cases, 0, charts[0], SweepMetric::time_us))
    for (const auto& p : line.points) EXPECT_DOUBLE_EQ(p.y, cases[p.ref.index].timing->span.median);
}

}  // namespace
}  // namespace kwb::gui
