// The totals of a sample's counters over its kernels: counts (.sum) add up, .max and .min take
// the extreme, and every other form (averages, ratios, rates, percentages) is weighted by each
// kernel's duration, so that a 10 us kernel at 90% and a 1 us kernel at 10% read 82.7%, not 50%.
#include "harness/record/counters.hpp"

#include <gtest/gtest.h>

#include <random>

namespace kwb {
namespace {

KernelCounters kernel_with(std::map<std::string, double> values) {
  KernelCounters k;
  k.name = "k";
  k.values = std::move(values);
  return k;
}

TEST(TotalOverKernels, NoKernelsNoTotals) { EXPECT_TRUE(total_over_kernels({}).empty()); }

TEST(TotalOverKernels, OneKernelsTotalIsItsValues) {
  const std::map<std::string, double> v = {{"gpu__time_duration.sum", 12.5}, {"dram__bytes_read.sum", 4096},
                                           {"lts__t_sector_hit_rate.pct", 37.5}, {"sm__warps_active.max", 48}};
  EXPECT_EQ(total_over_kernels({kernel_with(v)}), v);
}

TEST(TotalOverKernels, SumsAddMaxAndMinTakeTheExtremeOthersAreWeightedByDuration) {
  const auto total = total_over_kernels({
      kernel_with({{"gpu__time_duration.sum", 10000}, {"dram__bytes_read.sum", 1e9}, {"sm__warps_active.max", 40},
                   {"sm__warps_active.min", 3}, {"lts__t_sector_hit_rate.pct", 90}}),
      kernel_with({{"gpu__time_duration.sum", 1000}, {"dram__bytes_read.sum", 2.5e8}, {"sm__warps_active.max", 64},
                   {"sm__warps_active.min", 7}, {"lts__t_sector_hit_rate.pct", 10}}),
  });
  EXPECT_DOUBLE_EQ(total.at("gpu__time_duration.sum"), 11000);
  EXPECT_DOUBLE_EQ(total.at("dram__bytes_read.sum"), 1.25e9);
  EXPECT_DOUBLE_EQ(total.at("sm__warps_active.max"), 64);
  EXPECT_DOUBLE_EQ(total.at("sm__warps_active.min"), 3);
  EXPECT_DOUBLE_EQ(total.at("lts__t_sector_hit_rate.pct"), (10000 * 90 + 1000 * 10) / 11000.0);
}

TEST(TotalOverKernels, ARateOfASumIsWeightedNotAdded) {
  // Bytes per second over two kernels: the total bytes over the total time, which the
  // duration-weighted mean of the two rates is.
  const auto total = total_over_kernels({
      kernel_with({{"gpu__time_duration.sum", 3000}, {"dram__bytes_read.sum.per_second", 3e12}}),
      kernel_with({{"gpu__time_duration.sum", 1000}, {"dram__bytes_read.sum.per_second", 1e12}}),
  });
  const double bytes = 3e12 * 3000e-9 + 1e12 * 1000e-9, seconds = 4000e-9;
  EXPECT_NEAR(total.at("dram__bytes_read.sum.per_second"), bytes / seconds, 1e-3);
}

TEST(TotalOverKernels, WithoutTheDurationEveryKernelWeighsTheSame) {
  const auto total = total_over_kernels({kernel_with({{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 80}}),
                                         kernel_with({{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 20}}),
                                         kernel_with({{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 50}})});
  EXPECT_DOUBLE_EQ(total.at("sm__throughput.avg.pct_of_peak_sustained_elapsed"), 50);
}

TEST(TotalOverKernels, AMetricOnlySomeKernelsHaveIsTotalledOverThoseAndNegativeExtremesAreKept) {
  const auto total = total_over_kernels({
      kernel_with({{"a.sum", 1}, {"b.min", -5}, {"c.max", -7}}),
      kernel_with({{"a.sum", 2}}),
      kernel_with({{"b.min", -2}, {"c.max", -9}}),
  });
  EXPECT_DOUBLE_EQ(total.at("a.sum"), 3);
  EXPECT_DOUBLE_EQ(total.at("b.min"), -5);
  EXPECT_DOUBLE_EQ(total.at("c.max"), -7) << "the first value starts the extreme, not 0";
  EXPECT_EQ(total.size(), 3u);
}

TEST(TotalOverKernels, RandomSamplesMatchTheRuleComputedByHand) {
  std::mt19937_64 rng(4129);
  std::uniform_real_distribution<double> duration(500, 50000), count(0, 1e10), pct(0, 100);
  for (int trial = 0; trial < 20; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 6);
    std::vector<KernelCounters> kernels;
    double sum = 0, weighted = 0, weight = 0, most = -1, least = 1e300;
    for (int i = 0; i < n; ++i) {
      const double d = duration(rng), c = count(rng), p = pct(rng), m = count(rng);
      kernels.push_back(kernel_with({{"gpu__time_duration.sum", d}, {"lts__t_sectors.sum", c},
                                     {"sm__warps_active.avg.pct_of_peak_sustained_active", p},
                                     {"x.max", m}, {"x.min", m}}));
      sum += c;
      weighted += d * p;
      weight += d;
      most = std::max(most, m);
      least = std::min(least, m);
    }
    const auto total = total_over_kernels(kernels);
    SCOPED_TRACE("trial " + std::to_string(trial) + ", " + std::to_string(n) + " kernels");
    EXPECT_NEAR(total.at("lts__t_sectors.sum"), sum, 1e-6 * sum);
    EXPECT_NEAR(total.at("gpu__time_duration.sum"), weight, 1e-9 * weight);
    EXPECT_NEAR(total.at("sm__warps_active.avg.pct_of_peak_sustained_active"), weighted / weight, 1e-9);
    EXPECT_EQ(total.at("x.max"), most);
    EXPECT_EQ(total.at("x.min"), least);
  }
}

TEST(KernelLaunch, BlocksAndThreadsAreTheProductsOfTheThreeDimensions) {
  KernelLaunch l;
  l.grid[0] = 132, l.grid[1] = 4, l.grid[2] = 2;
  l.block[0] = 32, l.block[1] = 8, l.block[2] = 1;
  EXPECT_EQ(l.blocks(), 1056);
  EXPECT_EQ(l.threads_per_block(), 256);
}

}  // namespace
}  // namespace kwb
