// Strict parsing of the numeric and named flags: what is accepted exactly, and that every
// refusal names the flag and the value.
#include "cli/flag_values.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <random>

namespace kwb::cli {
namespace {

template <class F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const FlagError& e) {
    return e.what();
  }
  return "";
}

TEST(FlagValues, SeedAcceptsTheWholeUnsigned64BitRangeAndRandomValuesRoundTrip) {
  EXPECT_EQ(parse_seed("--seed", "0"), 0u);
  EXPECT_EQ(parse_seed("--seed", "18446744073709551615"), std::numeric_limits<std::uint64_t>::max());
  std::mt19937_64 rng(77);
  for (int i = 0; i < 100; ++i) {
    const std::uint64_t v = rng();
    EXPECT_EQ(parse_seed("--seed", std::to_string(v)), v);
  }
}

TEST(FlagValues, SeedRefusesSignsOverflowAndText) {
  for (const char* bad : {"-1", "+1", "18446744073709551616", "99999999999999999999", "1.5", "", " 1", "0x10"}) {
    const std::string m = refusal([&] { parse_seed("--seed", bad); });
    EXPECT_NE(m.find("--seed"), std::string::npos) << bad << ": " << m;
    EXPECT_NE(m.find(std::string("'") + bad + "'"), std::string::npos) << m;
  }
}

TEST(FlagValues, DeviceIndexIsAWholeNumberFromZero) {
  EXPECT_EQ(parse_device_index("--device", "0"), 0);
  EXPECT_EQ(parse_device_index("--device", "13"), 13);
  for (const char* bad : {"-1", "2147483648", "1.0", "gpu0", ""})
    EXPECT_NE(refusal([&] { parse_device_index("--device", bad); }).find("--device"), std::string::npos) << bad;
}

TEST(FlagValues, DeviceListIsAllOrDistinctIndices) {
  EXPECT_TRUE(parse_device_list("--devices", "all").all);
  EXPECT_EQ(parse_device_list("--devices", "1,0,3").indices, (std::vector<int>{1, 0, 3}));
  EXPECT_EQ(parse_device_list("--devices", "2").indices, std::vector<int>{2});
  for (const char* bad : {"", ",", "0,", ",1", "0,,1", "-1", "0;1", "ALL", "0,gpu1", "4294967296"})
    EXPECT_NE(refusal([&] { parse_device_list("--devices", bad); }).find("is not a device index"), std::string::npos)
        << bad;
  EXPECT_NE(refusal([&] { parse_device_list("--devices", "0,1,0"); }).find("GPU 0 is given twice"), std::string::npos);
}

TEST(FlagValues, SecondsMustBeFiniteAndAboveZero) {
  EXPECT_DOUBLE_EQ(parse_positive_seconds("--case-timeout", "0.25"), 0.25);
  EXPECT_DOUBLE_EQ(parse_positive_seconds("--case-timeout", "600"), 600);
  for (const char* bad : {"0", "-0", "-1", "nan", "inf", "1e999", "10s", ""})
    EXPECT_NE(refusal([&] { parse_positive_seconds("--case-timeout", bad); }).find("above 0"), std::string::npos)
        << bad;
}

TEST(FlagValues, CountIsAWholeNumberOfOneOrMore) {
  EXPECT_EQ(parse_positive_count("--max-cases", "1"), 1u);
  EXPECT_EQ(parse_positive_count("--max-cases", "250000"), 250000u);
  for (const char* bad : {"0", "-3", "1e4", "99999999999999999999999", ""})
    EXPECT_NE(refusal([&] { parse_positive_count("--max-cases", bad); }).find("--max-cases"), std::string::npos)
        << bad;
}

TEST(FlagValues, ChoiceListsTheAllowedValues) {
  EXPECT_TRUE(refusal([] { check_choice("--timer", "events", {"auto", "cupti", "events"}); }).empty());
  EXPECT_EQ(refusal([] { check_choice("--timer", "nvtx", {"auto", "cupti", "events"}); }),
            "--timer: unknown value 'nvtx'; use auto, cupti or events");
}

TEST(FlagValues, WithoutRepeatsKeepsTheFirstOrder) {
  EXPECT_EQ(without_repeats({"b", "a", "b", "c", "a"}), (std::vector<std::string>{"b", "a", "c"}));
}

}  // namespace
}  // namespace kwb::cli
