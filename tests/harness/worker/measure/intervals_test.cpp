// Sum, busy time and span of a sample's kernels.
#include "harness/worker/measure/intervals.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace kwb {
namespace {

TEST(SampleTimes, EmptyInputGivesZeros) {
  const SampleTimes t = sample_times(std::span<const KernelInterval>{});
  EXPECT_EQ(t.kernel_count, 0);
  EXPECT_DOUBLE_EQ(t.sum_ns, 0);
  EXPECT_DOUBLE_EQ(t.busy_ns, 0);
  EXPECT_DOUBLE_EQ(t.span_ns, 0);
}

TEST(SampleTimes, SingleKernelHasEqualSumBusyAndSpan) {
  const std::vector<KernelInterval> kernels = {{100, 350}};
  const SampleTimes t = sample_times(kernels);
  EXPECT_EQ(t.kernel_count, 1);
  EXPECT_DOUBLE_EQ(t.sum_ns, 250);
  EXPECT_DOUBLE_EQ(t.busy_ns, 250);
  EXPECT_DOUBLE_EQ(t.span_ns, 250);
}

TEST(SampleTimes, DisjointKernelsSpanIncludesGapsBusyEqualsSum) {
  // Durations 100 + 50 + 200; gaps 200 + 650.
  const std::vector<KernelInterval> kernels = {{1000, 1100}, {1300, 1350}, {2000, 2200}};
  const SampleTimes t = sample_times(kernels);
  EXPECT_EQ(t.kernel_count, 3);
  EXPECT_DOUBLE_EQ(t.sum_ns, 350);
  EXPECT_DOUBLE_EQ(t.busy_ns, 350);
  EXPECT_DOUBLE_EQ(t.span_ns, 1200);
  EXPECT_DOUBLE_EQ(t.span_ns - t.busy_ns, 850);
}

TEST(SampleTimes, OverlappingKernelsCountOnceInBusy) {
  const std::vector<KernelInterval> kernels = {{1000, 1500}, {1200, 1800}};
  const SampleTimes t = sample_times(kernels);
  EXPECT_DOUBLE_EQ(t.sum_ns, 1100);
  EXPECT_DOUBLE_EQ(t.busy_ns, 800);
  EXPECT_DOUBLE_EQ(t.span_ns, 800);
  EXPECT_LT(t.busy_ns, t.sum_ns);
}

TEST(SampleTimes, NestedKernelAddsNothingToBusy) {
  const std::vector<KernelInterval> kernels = {{1000, 2000}, {1200, 1300}};
  const SampleTimes t = sample_times(kernels);
  EXPECT_DOUBLE_EQ(t.sum_ns, 1100);
  EXPECT_DOUBLE_EQ(t.busy_ns, 1000);
  EXPECT_DOUBLE_EQ(t.span_ns, 1000);
}

TEST(SampleTimes, KernelAfterNestedOneStillMergesWithOuterKernel) {
  // The nested kernel ends at 1200, but the outer one runs to 3000, so [2500, 3500] overlaps it.
  const std::vector<KernelInterval> kernels = {{1000, 3000}, {1100, 1200}, {2500, 3500}};
  const SampleTimes t = sample_times(kernels);
  EXPECT_DOUBLE_EQ(t.sum_ns, 3100);
  EXPECT_DOUBLE_EQ(t.busy_ns, 2500);
  EXPECT_DOUBLE_EQ(t.span_ns, 2500);
}

TEST(SampleTimes, SpanEndsAtLatestEndNotAtLastStartedKernel) {
  const std::vector<KernelInterval> kernels = {{1000, 5000}, {1100, 1200}};
  EXPECT_DOUBLE_EQ(sample_times(kernels).span_ns, 4000);
}

TEST(SampleTimes, TouchingKernelsLeaveNoGap) {
  const std::vector<KernelInterval> kernels = {{1000, 1200}, {1200, 1500}, {1500, 1600}};
  const SampleTimes t = sample_times(kernels);
  EXPECT_DOUBLE_EQ(t.sum_ns, 600);
  EXPECT_DOUBLE_EQ(t.busy_ns, 600);
  EXPECT_DOUBLE_EQ(t.span_ns, 600);
}

TEST(SampleTimes, UnsortedInputGivesSameResultAsSorted) {
  const std::vector<KernelInterval> sorted = {{1000, 1500}, {1200, 1800}, {3000, 3100}, {3050, 3060}};
  const std::vector<KernelInterval> shuffled = {{3050, 3060}, {1200, 1800}, {3000, 3100}, {1000, 1500}};
  const SampleTimes a = sample_times(sorted);
  const SampleTimes b = sample_times(shuffled);
  EXPECT_EQ(b.kernel_count, 4);
  EXPECT_DOUBLE_EQ(b.sum_ns, 1210);
  EXPECT_DOUBLE_EQ(b.busy_ns, 900);
  EXPECT_DOUBLE_EQ(b.span_ns, 2100);
  EXPECT_DOUBLE_EQ(a.sum_ns, b.sum_ns);
  EXPECT_DOUBLE_EQ(a.busy_ns, b.busy_ns);
  EXPECT_DOUBLE_EQ(a.span_ns, b.span_ns);
}

TEST(SampleTimes, RealisticTimestampsKeepNanosecondPrecision) {
  // Near 1.7e18 adjacent doubles are 256 ns apart; converting timestamps before subtracting
  // would round these durations to multiples of 256.
  constexpr std::uint64_t base = 1'700'000'000'123'456'789ULL;
  const std::vector<KernelInterval> kernels = {
      {base + 7, base + 1241},     // 1234 ns
      {base + 1000, base + 1300},  // 300 ns, overlapping the first by 241
      {base + 1303, base + 1304},  // 1 ns after a 3 ns gap
  };
  const SampleTimes t = sample_times(kernels);
  EXPECT_EQ(t.kernel_count, 3);
  EXPECT_DOUBLE_EQ(t.sum_ns, 1535);
  EXPECT_DOUBLE_EQ(t.busy_ns, 1294);
  EXPECT_DOUBLE_EQ(t.span_ns, 1297);
}

}  // namespace
}  // namespace kwb
