// Refusals of settings in neutral words: a SettingText keeps each mention of a setting as the
// setting, so that each front end names it its own way, and what() is the command line's wording.
#include "harness/plan/setting_error.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <set>

#include "harness/plan/setting_values.hpp"

namespace kwb {
namespace {

// A front end that names every setting in capitals, to tell its words from the command line's.
std::string shouted(Setting s) {
  std::string id(setting_id(s));
  for (char& c : id) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return id;
}

const Setting kEverySetting[] = {Setting::op,        Setting::variant, Setting::dtype,     Setting::axis,
                                 Setting::shapes,    Setting::mode,    Setting::flush,     Setting::preset,
                                 Setting::seed,      Setting::max_cases, Setting::include_test_variants,
                                 Setting::suite,     Setting::tuning,  Setting::datasheet_ceilings,
                                 Setting::counters,  Setting::metrics,  Setting::launch};

TEST(SettingText, EachMentionOfASettingIsWordedByTheNamesGiven) {
  const SettingText text(Setting::flush, " clean: hot mode flushes nothing; drop ", Setting::flush, " or use ",
                         Setting::mode, " cold");
  EXPECT_EQ(text.worded(command_line_name), "--flush clean: hot mode flushes nothing; drop --flush or use --mode cold");
  EXPECT_EQ(text.worded(shouted), "FLUSH clean: hot mode flushes nothing; drop FLUSH or use MODE cold");
}

TEST(SettingText, PlainTextIsKeptAsWrittenBracesIncluded) {
  const SettingText text("value '{axis}' of ", Setting::axis);
  EXPECT_EQ(text.worded(shouted), "value '{axis}' of AXIS") << "only the settings given as settings are named";
}

TEST(SettingError, WhatIsTheCommandLinesWordingAndTheSettingIsKept) {
  const SettingError e(Setting::max_cases, SettingText("raise the limit with ", Setting::max_cases, " N"));
  EXPECT_STREQ(e.what(), "raise the limit with --max-cases N");
  EXPECT_EQ(e.setting, Setting::max_cases);
  EXPECT_EQ(e.worded(shouted), "raise the limit with MAX-CASES N");
  const PlanError& as_plan_error = e;  // every existing catch of PlanError still sees it
  EXPECT_STREQ(as_plan_error.what(), e.what());
}

TEST(SettingIds, AreTheFlagsLongNamesAndDistinct) {
  std::set<std::string> ids;
  for (Setting s : kEverySetting) {
    const std::string id(setting_id(s));
    EXPECT_FALSE(id.empty());
    EXPECT_EQ(id.find('_'), std::string::npos) << id << ": flags are written with '-'";
    EXPECT_EQ(command_line_name(s), "--" + id);
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), std::size(kEverySetting));
  EXPECT_EQ(setting_id(Setting::include_test_variants), "include-test-variants");
}

TEST(SettingValues, SeedAndCountRefusalsNameTheSettingTheyCheck) {
  EXPECT_EQ(parse_seed(Setting::seed, "18446744073709551615"), 18446744073709551615u);
  try {
    parse_seed(Setting::seed, "-1");
    ADD_FAILURE() << "expected a SettingError";
  } catch (const SettingError& e) {
    EXPECT_EQ(e.setting, Setting::seed);
    EXPECT_EQ(e.worded(shouted), "SEED: '-1' is not a whole number >= 0; give a seed from 0 to "
                                 "18446744073709551615, e.g. SEED 1");
  }
  EXPECT_EQ(parse_positive_count(Setting::max_cases, "3"), 3u);
  try {
    parse_positive_count(Setting::max_cases, "0");
    ADD_FAILURE() << "expected a SettingError";
  } catch (const SettingError& e) {
    EXPECT_EQ(e.setting, Setting::max_cases);
    EXPECT_STREQ(e.what(), "--max-cases: '0' is not a count; give a whole number of 1 or more, e.g. --max-cases 20000");
  }
}

TEST(SettingValues, ARepeatedNameCountsOnceInTheOrderFirstGiven) {
  EXPECT_EQ(without_repeats({"b", "a", "b", "c", "a"}), (std::vector<std::string>{"b", "a", "c"}));
  EXPECT_EQ(without_repeats(std::vector<int>{3, 3, 1, 3}), (std::vector<int>{3, 1}));
}

}  // namespace
}  // namespace kwb
