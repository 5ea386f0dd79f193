// gui/model/workbench with hardware counters: the roofline's measured points (where the counters
// put each case, flagged or not), the cases whose counters can stand beside the focus's, and the
// count the status panel reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "gui/model/workbench.hpp"
#include "tests/gui/counters_report.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb::gui {
namespace {

class GuiWorkbenchCounters : public ::testing::Test {
 protected:
  void SetUp() override { path_ = test::write_counters_report(dir_.path()); }
  test::TempDir dir_;
  std::filesystem::path path_;
};

const RooflineDot& dot_of(const std::vector<RooflineDot>& dots, CaseRef ref) {
  for (const auto& d : dots)
    if (d.ref == ref) return d;
  throw std::runtime_error("no dot for the case");
}

TEST_F(GuiWorkbenchCounters, MeasuredPointsSitWhereTheCountersPutTheCase) {
  Workbench wb;
  ASSERT_TRUE(wb.open(path_));
  const auto& cases = wb.reports()[0].report.cases;
  const auto dots = wb.roofline_dots();
  int measured = 0;
  for (const RooflineDot& d : dots) {
    const CaseRecord& c = cases[d.ref.index];
    if (!d.measured) {
      EXPECT_FALSE(c.derived->measured.has_value()) << c.nvtx_range;
      continue;
    }
    ++measured;
    const MeasuredWork& m = *c.derived->measured;
    // Executed FLOPs over measured bytes, at their rate over the median time; the
    // model's FLOPs where none were counted.
    const double flops = m.flops.value_or(c.derived->model_flops);
    EXPECT_DOUBLE_EQ(d.measured->intensity, flops / m.dram_bytes) << c.nvtx_range;
    EXPECT_DOUBLE_EQ(d.measured->tflops, flops / c.timing->span.median / 1e6) << c.nvtx_range;
    EXPECT_EQ(d.measured->flops_measured, m.flops.has_value()) << c.nvtx_range;
    EXPECT_EQ(d.measured->flagged, !m.flags.empty()) << c.nvtx_range;
  }
  EXPECT_EQ(measured, 5);  // every case with counters; not the unavailable one nor the plain one
  // The memory set alone: only the bytes moved, so the point moves sideways by the traffic ratio.
  const RooflineDot& memory_only = dot_of(dots, {0, 2});
  ASSERT_TRUE(memory_only.measured.has_value());
  EXPECT_FALSE(memory_only.measured->flops_measured);
  EXPECT_DOUBLE_EQ(memory_only.measured->tflops, memory_only.tflops);
  EXPECT_NEAR(memory_only.intensity / memory_only.measured->intensity,
              cases[2].derived->measured->traffic_ratio, 1e-9);
  // Four times the model's bytes: flagged, and four times less intense.
  const RooflineDot& eager = dot_of(dots, {0, 1});
  ASSERT_TRUE(eager.measured.has_value());
  EXPECT_TRUE(eager.measured->flagged);
  EXPECT_FALSE(dot_of(dots, {0, 0}).measured->flagged);
  EXPECT_FALSE(dot_of(dots, {0, 6}).measured.has_value());
}

TEST_F(GuiWorkbenchCounters, PartnersAreTheSameCaseElsewhereThenBaselinesThenOtherVariants) {
  Workbench wb;
  ASSERT_TRUE(wb.open(path_));
  // fused_v2 (0): the baseline (1) before the other fused variant (2), each with counters.
  EXPECT_EQ(wb.counter_partners({0, 0}), (std::vector<CaseRef>{{0, 1}, {0, 2}}));
  // Other shapes and ops are never partners; a case whose counters were unavailable neither.
  EXPECT_TRUE(wb.counter_partners({0, 3}).empty());
  EXPECT_TRUE(wb.counter_partners({0, 6}).empty());
  // With a second report open, the same case there comes first (BASE against NEW).
  ASSERT_TRUE(wb.open(path_));
  EXPECT_EQ(wb.counter_partners({1, 0}),
            (std::vector<CaseRef>{{0, 0}, {1, 1}, {1, 2}, {0, 1}, {0, 2}}));
  EXPECT_EQ(wb.cases_with_counters(), 10);
}

TEST_F(GuiWorkbenchCounters, OpeningSaysHowManyCasesHaveCounters) {
  Workbench wb;
  ASSERT_TRUE(wb.open(path_));
  ASSERT_TRUE(wb.open(test::kSampleReport));
  ASSERT_EQ(wb.messages().size(), 2u);
  EXPECT_NE(wb.messages()[0].text.find("(7 cases, 5 with hardware counters)"), std::string::npos)
      << wb.messages()[0].text;
  EXPECT_NE(wb.messages()[1].text.find("(127 cases)"), std::string::npos) << wb.messages()[1].text;
}

}  // namespace
}  // namespace kwb::gui
