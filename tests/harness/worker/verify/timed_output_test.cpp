// The words of the timed-output check and its memory rule (the checks themselves need a GPU:
// tests/gpu/device_state_guard_test.cpp and tests/gpu/case_isolation_test.cpp).
#include "harness/worker/verify/timed_output.hpp"

#include <gtest/gtest.h>

namespace kwb {
namespace {

TEST(DescribeDifference, NothingDifferentSaysNothing) {
  EXPECT_EQ(describe_difference("y", CompareCounts{}, 100), "");
}

TEST(DescribeDifference, CountsTheDifferingAndNeverWrittenElementsAndTheFirstIndex) {
  EXPECT_EQ(describe_difference("y", {8388608, 8388608, 8388608}, 16777216),
            "output 'y': 8388608 of 16777216 elements differ from the verified output, 8388608 of them never "
            "written (still poison); the first at element 8388608");
  EXPECT_EQ(describe_difference("dweight", {3, 0, 17}, 4096),
            "output 'dweight': 3 of 4096 elements differ from the verified output; the first at element 17");
}

TEST(DescribeScan, PoisonAndNewNonFiniteElementsAreWrongTheVerifiedOnesAreNot) {
  EXPECT_EQ(describe_scan("y", {0, 0}, 0, 64), "");
  EXPECT_EQ(describe_scan("y", {2, 0}, 2, 64), "") << "as many NaN/Inf as the verified output had";
  EXPECT_EQ(describe_scan("y", {0, 32}, 0, 64), "output 'y': 32 of 64 elements never written (still poison)");
  EXPECT_EQ(describe_scan("y", {5, 1}, 2, 64),
            "output 'y': 1 of 64 elements never written (still poison); output 'y': 5 NaN/Inf elements where the "
            "verified output had 2");
}

TEST(CopyDoesNotFit, KeepsHeadroomBesideTheCopyAndSaysWhatWasNeeded) {
  constexpr std::size_t kMiB = 1 << 20;
  EXPECT_EQ(copy_does_not_fit(512 * kMiB, 1024 * kMiB), std::nullopt);
  EXPECT_EQ(copy_does_not_fit(768 * kMiB, 1024 * kMiB), std::nullopt) << "exactly the headroom left";
  const auto why = copy_does_not_fit(769 * kMiB, 1024 * kMiB);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "a device copy of the verified outputs needs 0.75 GiB beside 0.25 GiB of headroom, 1.00 GiB free");
}

}  // namespace
}  // namespace kwb
