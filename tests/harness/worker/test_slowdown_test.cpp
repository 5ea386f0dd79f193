// The test-only slowdown switch's value: OP:VARIANT:FRACTION, the fraction in (0, 1].
#include "harness/worker/test_slowdown.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <vector>

namespace kwb {
namespace {

TEST(TestSlowdown, ParsesOpVariantAndFraction) {
  const TestSlowdown s = parse_test_slowdown("softmax_fwd:fused_v5_cluster_row_in_smem:0.05");
  EXPECT_EQ(s.op, "softmax_fwd");
  EXPECT_EQ(s.variant, "fused_v5_cluster_row_in_smem");
  EXPECT_DOUBLE_EQ(s.fraction, 0.05);
  EXPECT_TRUE(s.applies_to("softmax_fwd", "fused_v5_cluster_row_in_smem"));
  EXPECT_FALSE(s.applies_to("softmax_fwd", "baseline_eager_5_launches"));
  EXPECT_DOUBLE_EQ(parse_test_slowdown("a:b:1").fraction, 1.0);
}

TEST(TestSlowdown, RefusesMalformedValues) {
  for (const char* bad : {"", "a", "a:b", ":b:0.1", "a::0.1", "a:b:", "a:b:0", "a:b:-0.1", "a:b:1.01", "a:b:nan",
                          "a:b:inf", "a:b:0.05x", "a:b:5%"})
    EXPECT_THROW(parse_test_slowdown(bad), std::invalid_argument) << bad;
}

TEST(TestSlowdown, UnsetOrEmptyEnvironmentMeansOff) {
  unsetenv(kTestSlowdownEnv);
  EXPECT_TRUE(test_slowdowns_from_env().empty());
  setenv(kTestSlowdownEnv, "", 1);
  EXPECT_TRUE(test_slowdowns_from_env().empty());
  setenv(kTestSlowdownEnv, "rope_fwd:fused_v1_vec16_shared_table:0.1", 1);
  ASSERT_EQ(test_slowdowns_from_env().size(), 1u);
  EXPECT_DOUBLE_EQ(test_slowdowns_from_env()[0].fraction, 0.1);
  unsetenv(kTestSlowdownEnv);
}

TEST(TestSlowdown, SeveralVariantsEachWithItsOwnFraction) {
  const auto list = parse_test_slowdowns("a:b:0.05,c:d:0.02");
  ASSERT_EQ(list.size(), 2u);
  ASSERT_NE(find_slowdown(list, "c", "d"), nullptr);
  EXPECT_DOUBLE_EQ(find_slowdown(list, "c", "d")->fraction, 0.02);
  EXPECT_DOUBLE_EQ(find_slowdown(list, "a", "b")->fraction, 0.05);
  EXPECT_EQ(find_slowdown(list, "a", "d"), nullptr);
  for (const char* bad : {"a:b:0.05,", ",a:b:0.05", "a:b:0.05,,c:d:0.1", "a:b:0.05,a:b:0.1"})
    EXPECT_THROW(parse_test_slowdowns(bad), std::invalid_argument) << bad;
}

}  // namespace
}  // namespace kwb

namespace kwb {
namespace {

// The report keeps the switch's exact value beside the rounded text for people, so that
// `kwb compare --confirm` gives a side's worker the fractions that side was measured with.
TEST(TestSlowdown, SettingsHoldTheExactFractionsBesideTheRoundedText) {
  std::mt19937_64 rng(2511);
  std::uniform_real_distribution<double> fraction(1e-4, 1.0);
  for (int trial = 0; trial < 200; ++trial) {
    const std::vector<TestSlowdown> slowdowns = {{"rmsnorm_fwd", "fused_v2_vec16", fraction(rng)},
                                                 {"softmax_fwd", "fused_v1_row_per_block", fraction(rng)}};
    const auto settings = test_slowdown_settings(slowdowns);
    ASSERT_EQ(settings.size(), 2u);
    EXPECT_EQ(settings[0].first, kTestSlowdownSetting);
    EXPECT_NE(settings[0].second.find("(on purpose, KWB_TEST_SLOWDOWN)"), std::string::npos) << settings[0].second;
    EXPECT_EQ(settings[1].first, kTestSlowdownValueSetting);
    const std::vector<TestSlowdown> back = parse_test_slowdowns(settings[1].second);
    ASSERT_EQ(back.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(back[i].op, slowdowns[i].op);
      EXPECT_EQ(back[i].variant, slowdowns[i].variant);
      EXPECT_EQ(back[i].fraction, slowdowns[i].fraction) << settings[1].second << ": bit for bit, not to 3 digits";
    }
  }
  EXPECT_TRUE(test_slowdown_settings({}).empty()) << "switch off: nothing in the report";
  EXPECT_EQ(test_slowdown_value({{"a", "b", 0.012345678}}), "a:b:0.012345678");
}

}  // namespace
}  // namespace kwb
