// The SVG writer: tick choice on log and linear axes, data-to-pixel mapping, escaping.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "reports/review/svg_chart.hpp"
#include "tests/reports/review/review_test_support.hpp"

namespace kwb {
namespace {

using review::AxisScale;

TEST(SvgChart, LogTicksArePowersOfTenOverWideRanges) {
  EXPECT_EQ(review::log_ticks(0.01, 1000), (std::vector<double>{0.01, 0.1, 1, 10, 100, 1000}));
}

TEST(SvgChart, LogTicksAdd2And5UnderThreeDecades) {
  EXPECT_EQ(review::log_ticks(1, 100), (std::vector<double>{1, 2, 5, 10, 20, 50, 100}));
  EXPECT_EQ(review::log_ticks(3, 40), (std::vector<double>{5, 10, 20}));
}

TEST(SvgChart, LinearTicksUseNiceStepsInsideTheRange) {
  EXPECT_EQ(review::linear_ticks(0, 3300, 6), (std::vector<double>{0, 1000, 2000, 3000}));
  const auto t = review::linear_ticks(0, 1, 5);
  ASSERT_EQ(t.size(), 6u);
  EXPECT_NEAR(t[3], 0.6, 1e-12);
}

// A sweep whose axis values are huge and close (cols 1e18, 1e18 + 128, 1e18 + 256): the nice step
// (50) is below the spacing of doubles there (128), so stepping a value would never pass the top.
TEST(SvgChart, LinearTicksOfHugeCloseValuesAreFewAndIncreasing) {
  for (const auto& [lo, hi] : {std::pair{1e18, 1e18 + 256}, std::pair{-1e300, -1e300 + 1e284}, std::pair{1e15, 1e15 + 1}}) {
    const auto t = review::linear_ticks(lo, hi, 6);
    EXPECT_LE(t.size(), 30u) << lo;
    for (std::size_t i = 1; i < t.size(); ++i) EXPECT_GT(t[i], t[i - 1]) << lo;
    for (double v : t) EXPECT_TRUE(std::isfinite(v));
  }
  EXPECT_EQ(review::linear_ticks(0, 3300, 6).size(), 4u) << "ordinary ranges as before";
}

TEST(SvgChart, LogAxisMapsDecadesToEqualPixelSteps) {
  const AxisScale x{0.1, 1000, true, 100, 500};  // four decades over 400 px
  EXPECT_DOUBLE_EQ(x.to_px(0.1), 100);
  EXPECT_DOUBLE_EQ(x.to_px(1), 200);
  EXPECT_DOUBLE_EQ(x.to_px(1000), 500);
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> e(-1, 3);
  for (int i = 0; i < 50; ++i) {  // monotone, and a x10 step is always 100 px
    const double v = std::pow(10.0, e(rng));
    if (v * 10 <= 1000) EXPECT_NEAR(x.to_px(v * 10) - x.to_px(v), 100, 1e-9);
  }
  EXPECT_FALSE(x.contains(0));
  EXPECT_FALSE(x.contains(-1));
  EXPECT_FALSE(x.contains(2000));
}

TEST(SvgChart, InvertedYAxisPutsLargerValuesHigher) {
  const AxisScale y{0, 100, false, 400, 0};
  EXPECT_DOUBLE_EQ(y.to_px(0), 400);
  EXPECT_DOUBLE_EQ(y.to_px(25), 300);
  EXPECT_LT(y.to_px(90), y.to_px(10));
}

TEST(SvgChart, TickLabelsAreShort) {
  EXPECT_EQ(review::tick_label(0.01), "0.01");
  EXPECT_EQ(review::tick_label(1000), "1k");
  EXPECT_EQ(review::tick_label(16384), "16k");
  EXPECT_EQ(review::tick_label(2.5), "2.5");
}

TEST(SvgChart, XmlEscapeNeutralisesMarkupQuotesAndControlBytes) {
  EXPECT_EQ(review::xml_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(review::xml_escape(std::string("x\x01y")), "x\xEF\xBF\xBDy");
  EXPECT_EQ(review::xml_escape("plain_v1"), "plain_v1");
}

TEST(SvgChart, HostileNamesStayTextInsideTheSvg) {
  review::SvgChart chart(400, 300, {1, 100, true, 50, 350}, {1, 100, true, 250, 10}, "x<", "y&",
                         "</svg><script>alert(1)</script>");
  chart.point(10, 10, "#000", "<script>alert('x')</script>");
  chart.placed_text(100, 100, -20, "a\"b", "#000");
  chart.legend_entry("</text><b>", "#f00");
  const std::string svg = chart.str();
  EXPECT_EQ(svg.find("<script"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(test::tag_balance_problem(svg), "") << svg;
}

TEST(SvgChart, PointsOutsideTheAxesAreDropped) {
  review::SvgChart chart(400, 300, {1, 100, true, 50, 350}, {1, 100, true, 250, 10}, "x", "y", "t");
  chart.point(10, 10, "#000", "inside");
  chart.point(0, 10, "#000", "zero on a log axis");
  chart.point(10, 1e6, "#000", "above");
  const std::string svg = chart.str();
  std::size_t circles = 0;
  for (auto p = svg.find("<circle"); p != std::string::npos; p = svg.find("<circle", p + 1)) ++circles;
  EXPECT_EQ(circles, 1u);
}

}  // namespace
}  // namespace kwb
