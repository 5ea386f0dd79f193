// The bar of `kwb compare --confirm`: rounds counted over every suspect, a case that ends early on
// a round not timed counted whole and as failed, and the case and round that run next named.
#include "cli/compare_confirm.hpp"

#include <gtest/gtest.h>

namespace kwb::cli {
namespace {

TEST(RoundProgress, CountsRoundsNamesTheNextOneAndCountsACaseEndedEarlyWhole) {
  RoundProgress rounds({"a:v:bf16:64", "b:v:bf16:64", "c:v:bf16:64"}, 4);
  ProgressStatus s = rounds.status();
  EXPECT_EQ(s.done, 0u);
  EXPECT_EQ(s.total, 12u);
  EXPECT_EQ(s.current, "a:v:bf16:64 round 1/4");
  s = rounds.after_round(0, 1, false);
  EXPECT_EQ(s.done, 1u);
  EXPECT_EQ(s.current, "a:v:bf16:64 round 2/4");
  for (std::size_t r = 2; r <= 4; ++r) s = rounds.after_round(0, r, false);
  EXPECT_EQ(s.done, 4u);
  EXPECT_EQ(s.current, "b:v:bf16:64 round 1/4") << "the first case done: the next one's first round";
  s = rounds.after_round(1, 1, false);
  s = rounds.after_round(1, 2, true);  // not timed on a side: no further round of b
  EXPECT_EQ(s.done, 8u) << "b's rounds left are counted done, so the bar still ends full";
  EXPECT_EQ(s.failed, 1u);
  EXPECT_EQ(s.current, "c:v:bf16:64 round 1/4");
  for (std::size_t r = 1; r <= 4; ++r) s = rounds.after_round(2, r, false);
  EXPECT_EQ(s.done, s.total);
  EXPECT_EQ(s.failed, 1u);
  EXPECT_EQ(s.current, "") << "nothing runs after the last round";
}

}  // namespace
}  // namespace kwb::cli
