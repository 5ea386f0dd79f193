// The default of the `l2_hint` tunable (kernels/common/l2_hint.hpp): auto hints reads of up to
// 6x the L2 with the op's hint and leaves larger ones plain; a value a user names is kept.
#include "kernels/common/l2_hint.hpp"

#include <gtest/gtest.h>

namespace kwb::l2 {
namespace {

constexpr double kL2 = 50.0 * (1 << 20);  // an H100's

TEST(L2Hint, AutoHintsReadsUpToSixTimesTheL2) {
  EXPECT_EQ(resolve(Hint::kAuto, Hint::kEvictFirst, 134e6, kL2), Hint::kEvictFirst);  // paged decode b1 ctx32768
  EXPECT_EQ(resolve(Hint::kAuto, Hint::kStreaming, 33e6, kL2), Hint::kStreaming);
  EXPECT_EQ(resolve(Hint::kAuto, Hint::kEvictFirst, 6 * kL2, kL2), Hint::kEvictFirst);
  EXPECT_EQ(resolve(Hint::kAuto, Hint::kEvictFirst, 6 * kL2 + 1, kL2), Hint::kNormal);
  EXPECT_EQ(resolve(Hint::kAuto, Hint::kStreaming, 805e6, kL2), Hint::kNormal);  // mean pooling b4 s32768
}

TEST(L2Hint, AnAskedValueIsKeptAtAnySize) {
  for (double bytes : {1e3, 134e6, 805e6, 4e9})
    for (Hint asked : {Hint::kNormal, Hint::kStreaming, Hint::kEvictFirst})
      EXPECT_EQ(resolve(asked, Hint::kEvictFirst, bytes, kL2), asked) << bytes;
}

TEST(L2Hint, TheThresholdFollowsTheL2) {
  // 400 MB: plain on a 50 MiB L2, hinted on a GPU with twice the L2.
  EXPECT_EQ(resolve(Hint::kAuto, Hint::kEvictFirst, 400e6, kL2), Hint::kNormal);
  EXPECT_EQ(resolve(Hint::kAuto, Hint::kEvictFirst, 400e6, 2 * kL2), Hint::kEvictFirst);
}

}  // namespace
}  // namespace kwb::l2
