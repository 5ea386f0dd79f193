// gui/plot/scale: mapping, zoom and pan in mapped space, and ticks on linear and log axes.
#include "gui/plot/scale.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace kwb::gui::plot {
namespace {

TEST(GuiPlotScale, LogScaleMapsDecadesEvenly) {
  const Scale s{1, 1000, true};
  EXPECT_NEAR(s.to_unit(10), 1.0 / 3, 1e-12);
  EXPECT_NEAR(s.from_unit(2.0 / 3), 100, 1e-9);
}

TEST(GuiPlotScale, ZoomKeepsThePointUnderTheCursor) {
  Scale s{1, 1000, true};
  const double under = s.from_unit(0.25);
  s.zoom(0.5, 0.25);
  EXPECT_NEAR(s.to_unit(under), 0.25, 1e-12);
  EXPECT_NEAR(s.hi / s.lo, std::pow(1000, 0.5), 1e-6);
  Scale lin{0, 10, false};
  lin.pan(0.1);
  EXPECT_NEAR(lin.lo, 1, 1e-12);
  EXPECT_NEAR(lin.hi, 11, 1e-12);
}

TEST(GuiPlotScale, LinearTicksAreNiceSteps) {
  const auto t = ticks(Scale{0, 97, false}, 5);
  ASSERT_GE(t.size(), 4u);
  EXPECT_EQ(t[0].value, 0);
  EXPECT_EQ(t[1].value, 20);
  EXPECT_EQ(t[1].label, "20");
}

TEST(GuiPlotScale, LogTicksLabelDecades) {
  const auto t = ticks(Scale{0.5, 2000, true}, 6);
  std::vector<double> labelled;
  for (const auto& k : t)
    if (k.major) labelled.push_back(k.value);
  EXPECT_EQ(labelled, (std::vector<double>{1, 10, 100, 1000}));
}

TEST(GuiPlotScale, FitOfOneValueStillSpans) {
  const Scale s = Scale::fit(5, 5, false);
  EXPECT_LT(s.lo, 5);
  EXPECT_GT(s.hi, 5);
}

}  // namespace
}  // namespace kwb::gui::plot
