// How a change of the device state is worded, and which changes count (the reads themselves need a
// GPU: tests/gpu/device_state_guard_test.cpp).
#include "harness/worker/isolate/device_state.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace kwb {
namespace {

DeviceState state(std::uint64_t persisting, std::uint64_t stack, std::uint64_t window) {
  DeviceState s;
  s.values.push_back({"persisting L2 limit (cudaLimitPersistingL2CacheSize)", persisting, show_bytes(persisting)});
  s.values.push_back({"stack size per thread (cudaLimitStackSize)", stack, show_bytes(stack), true});
  s.values.push_back({"stream access policy window (cudaStreamAttributeAccessPolicyWindow)", window,
                      window ? "a window of " + show_bytes(window) : "none"});
  return s;
}

TEST(DescribeChanges, TheSameStateIsNoChange) {
  EXPECT_EQ(describe_changes(state(0, 1024, 0), state(0, 1024, 0)), "");
}

TEST(DescribeChanges, NamesEachChangedValueWithItsApiAndBothValuesInOrder) {
  const std::string changes = describe_changes(state(0, 1024, 0), state(39321600, 1024, 33554432));
  EXPECT_EQ(changes,
            "persisting L2 limit (cudaLimitPersistingL2CacheSize): 0 B -> 37.5 MiB (39321600 B); "
            "stream access policy window (cudaStreamAttributeAccessPolicyWindow): none -> a window of 32 MiB "
            "(33554432 B)");
}

TEST(DescribeChanges, AStackThatGrewForAKernelIsNoChangeButOneThatShrankIs) {
  EXPECT_EQ(describe_changes(state(0, 1024, 0), state(0, 4096, 0)), "");
  EXPECT_EQ(describe_changes(state(0, 1024, 0), state(0, 512, 0)),
            "stack size per thread (cudaLimitStackSize): 1024 B -> 512 B");
}

TEST(DescribeChanges, AValueThatBecameUnreadableOrReadableIsAChange) {
  DeviceState before = state(0, 1024, 0), after = state(0, 1024, 0);
  after.values[0].value.reset();
  EXPECT_EQ(describe_changes(before, after), "persisting L2 limit (cudaLimitPersistingL2CacheSize): 0 B -> unreadable");
  EXPECT_EQ(describe_changes(after, before), "persisting L2 limit (cudaLimitPersistingL2CacheSize): unreadable -> 0 B");
  EXPECT_EQ(describe_changes(after, after), "") << "unreadable on both sides: nothing to compare";
}

TEST(DescribeChanges, ReadingsOfDifferentProbesAreAProgrammingError) {
  DeviceState shorter = state(0, 1024, 0);
  shorter.values.pop_back();
  EXPECT_THROW(describe_changes(state(0, 1024, 0), shorter), std::logic_error);
}

TEST(ShowBytes, SmallCountsInBytesLargeOnesInMiBWithTheExactCount) {
  EXPECT_EQ(show_bytes(0), "0 B");
  EXPECT_EQ(show_bytes(1048575), "1048575 B");
  EXPECT_EQ(show_bytes(1048576), "1 MiB (1048576 B)");
  EXPECT_EQ(show_bytes(50331648), "48 MiB (50331648 B)");
}

}  // namespace
}  // namespace kwb
