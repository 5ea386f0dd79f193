// gui/model/sample_histogram: every sample counted once, the slowest in the last bin.
#include "gui/model/sample_histogram.hpp"

#include <gtest/gtest.h>

#include <numeric>

namespace kwb::gui {
namespace {

TEST(GuiSampleHistogram, EverySampleLandsInOneBin) {
  const std::vector<double> samples = {10, 10.5, 11, 11, 11, 12, 19.9, 20};
  const SampleHistogram h = sample_histogram(samples, 10);
  ASSERT_EQ(h.counts.size(), 10u);
  EXPECT_EQ(std::accumulate(h.counts.begin(), h.counts.end(), 0), 8);
  EXPECT_DOUBLE_EQ(h.lo, 10);
  EXPECT_DOUBLE_EQ(h.hi, 20);
  EXPECT_EQ(h.counts.back(), 2);  // 19.9 and the slowest, 20
  EXPECT_EQ(h.counts[0], 2);      // 10 and 10.5
  EXPECT_EQ(h.peak, 3);           // 11, three times
}

TEST(GuiSampleHistogram, NoSamplesNoBinsAndEqualSamplesOneBin) {
  EXPECT_TRUE(sample_histogram({}).counts.empty());
  const SampleHistogram h = sample_histogram({5, 5, 5}, 4);
  EXPECT_EQ(h.counts[0], 3);
  EXPECT_GT(h.hi, h.lo);
}

}  // namespace
}  // namespace kwb::gui
