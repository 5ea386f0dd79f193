// Thresholds as written: "2%" and 0.02 are the same fraction; ambiguous or out-of-range text is
// refused with what to write instead.
#include "harness/plan/threshold.hpp"

#include <gtest/gtest.h>

#include <random>

#include "tests/support/mentions.hpp"

namespace kwb {
namespace {

using test::Mentions;

std::string refusal(std::string_view text) {
  try {
    parse_threshold(text);
  } catch (const ThresholdError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected '" << text << "' to be refused";
  return {};
}

TEST(Threshold, PercentAndFractionAreTheSame) {
  EXPECT_DOUBLE_EQ(parse_threshold("2%"), 0.02);
  EXPECT_DOUBLE_EQ(parse_threshold("0.02"), 0.02);
  EXPECT_DOUBLE_EQ(parse_threshold("2.5 %"), 0.025);
  EXPECT_DOUBLE_EQ(parse_threshold(" 3% "), 0.03);
  EXPECT_DOUBLE_EQ(parse_threshold("100%"), 1.0);
  EXPECT_DOUBLE_EQ(parse_threshold("5e-2"), 0.05);
}

TEST(Threshold, RandomPercentagesMatchTheirFractions) {
  std::mt19937 rng(7);
  for (int i = 0; i < 200; ++i) {
    const int hundredths = 1 + static_cast<int>(rng() % 9999);  // 0.01% .. 99.99%
    const double percent = hundredths / 100.0;
    const std::string as_percent = std::to_string(percent) + "%";
    const std::string as_fraction = std::to_string(percent / 100.0 + 0.0);
    SCOPED_TRACE(as_percent);
    EXPECT_NEAR(parse_threshold(as_percent), percent / 100.0, 1e-12);
    EXPECT_NEAR(parse_threshold(as_fraction), percent / 100.0, 1e-6);  // to_string keeps 6 decimals
  }
}

TEST(Threshold, AmbiguousAndOutOfRangeValuesAreRefused) {
  EXPECT_TRUE(Mentions(refusal("3"), "ambiguous"));
  EXPECT_TRUE(Mentions(refusal("3"), "3%"));
  EXPECT_TRUE(Mentions(refusal("1"), "ambiguous"));
  EXPECT_TRUE(Mentions(refusal("0"), "out of range"));
  EXPECT_TRUE(Mentions(refusal("0%"), "out of range"));
  EXPECT_TRUE(Mentions(refusal("150%"), "out of range"));
  EXPECT_TRUE(Mentions(refusal("-2%"), "not a threshold"));
  EXPECT_TRUE(Mentions(refusal("2%%"), "not a threshold"));
  EXPECT_TRUE(Mentions(refusal("inf"), "not a threshold"));
  EXPECT_TRUE(Mentions(refusal("nan%"), "not a threshold"));
  EXPECT_TRUE(Mentions(refusal(""), "not a threshold"));
  EXPECT_TRUE(Mentions(refusal("fast"), "e.g. 3%") || Mentions(refusal("fast"), "such as 3%"));
}

}  // namespace
}  // namespace kwb
