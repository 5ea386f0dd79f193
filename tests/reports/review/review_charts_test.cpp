// The roofline and sweep charts drawn from a model: one mark per case or variant, datasheet
// roofs dashed, every roof labelled.
#include <gtest/gtest.h>

#include <regex>

#include "reports/review/review_charts.hpp"
#include "tests/reports/review/review_test_support.hpp"

namespace kwb {
namespace review_charts_test {
namespace {

using test::make_case;

std::size_t count(const std::string& s, const std::string& part) {
  std::size_t n = 0;
  for (auto p = s.find(part); p != std::string::npos; p = s.find(part, p + 1)) ++n;
  return n;
}

TEST(ReviewCharts, RooflineDrawsEveryRoofAndEveryCase) {
  std::vector<CaseRecord> cases;
  for (double ai : {0.25, 0.5, 1.0, 8.0, 120.0}) cases.push_back(make_case({.median_us = 5, .intensity = ai}));
  const auto m = review::build_review_model(test::sample_run(), cases);
  const std::string svg = review::roofline_svg(m);
  EXPECT_EQ(count(svg, "<circle class=\"pt\""), cases.size());
  EXPECT_EQ(count(svg, "<polyline"), m.ceilings.size());  // every roof is inside this plot
  // One label per measured roof, naming its datasheet twin's figure; the dashed line is the twin.
  for (const char* label : {">DRAM copy 3000 GB/s (datasheet 3350)<", ">L2 copy 6700 GB/s<",
                            ">fp32 FFMA 64.0 TFLOP/s (datasheet 67.0)<", ">bf16 tensor 700 TFLOP/s (datasheet 989)<"})
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  EXPECT_EQ(svg.find("(datasheet)<"), std::string::npos) << "a datasheet roof with a measured twin has no label";
  // Datasheet roofs (3 here) dashed; measured ones solid.
  EXPECT_EQ(count(svg, "stroke=\"#808080\" stroke-width=\"2\" stroke-dasharray"), 3u);
  EXPECT_EQ(count(svg, "stroke=\"#333333\" stroke-width=\"2\" stroke-dasharray"), 0u);
  EXPECT_EQ(test::tag_balance_problem(svg), "");
}

TEST(ReviewCharts, RooflineWithoutCasesOrCeilingsIsStillAChart) {
  RunInfo run = test::sample_run();
  run.ceilings.reset();
  run.datasheet_ceilings.reset();
  const std::string svg = review::roofline_svg(review::build_review_model(run, {}));
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_EQ(count(svg, "<circle class=\"pt\""), 0u);
  EXPECT_EQ(test::tag_balance_problem(svg), "");
}

TEST(ReviewCharts, SweepDrawsOneLinePerVariantWithAPointPerValue) {
  review::SweepChart c{"rmsnorm_fwd", "bf16", "cold", "cols", "rows=16384", "GB/s", true,
                       {{"fused_v1", {{512, 900}, {4096, 2700}, {16384, 2000}}},
                        {"fused_v2", {{512, 2300}, {4096, 2950}, {16384, 2200}}}}};
  const std::string svg = review::sweep_svg(c);
  EXPECT_EQ(count(svg, "<polyline"), 2u);
  EXPECT_EQ(count(svg, "<circle"), 6u);
  EXPECT_NE(svg.find("<title>fused_v2 cols=4096: 2950 GB/s</title>"), std::string::npos);
  EXPECT_NE(svg.find(">cols  (rows=16384)<"), std::string::npos);
  EXPECT_EQ(test::tag_balance_problem(svg), "");
}

}  // namespace
}  // namespace review_charts_test
}  // namespace kwb
