// Where the oracles' fp64 products run: KWB_ORACLE_GPU's reading; a thread that named no device
// (anything but the worker's) never takes the GPU path, GPU or not; and, on a machine without a
// GPU (CI), a thread that did name one gets a GPU path that declines without touching C, so that a
// product above the GPU cut-off still gets the CPU's result. (The GPU side is
// tests/gpu/matmul_fp64_gpu_test.cpp.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "harness/catalogue/oracle_device.hpp"
#include "harness/worker/measure/device_info.hpp"
#include "reference/matmul_fp64.hpp"
#include "reference/matmul_fp64_gpu.hpp"
#include "tests/support/oracle_gpu.hpp"

namespace kwb::ref {
namespace {

using test::random_values;

using test::ScopedOracleGpuDevice;
using test::ScopedOracleGpuSwitch;

TEST(OracleGpuSwitch, ReadsOnAndOffAndKnowsWhatItDoesNotKnow) {
  EXPECT_EQ(read_oracle_gpu_switch(nullptr), true) << "unset: the GPU where usable";
  EXPECT_EQ(read_oracle_gpu_switch(""), true);
  EXPECT_EQ(read_oracle_gpu_switch("1"), true);
  EXPECT_EQ(read_oracle_gpu_switch("on"), true);
  EXPECT_EQ(read_oracle_gpu_switch("0"), false);
  EXPECT_EQ(read_oracle_gpu_switch("off"), false);
  EXPECT_EQ(read_oracle_gpu_switch("no"), std::nullopt);
  EXPECT_EQ(read_oracle_gpu_switch("00"), std::nullopt);
}

TEST(OracleGpuSwitch, TheEnvironmentIsReadAtEachCall) {
  {
    const ScopedOracleGpuSwitch off("0");
    EXPECT_FALSE(oracle_gpu_allowed());
  }
  {
    const ScopedOracleGpuSwitch unset(nullptr);
    EXPECT_TRUE(oracle_gpu_allowed());
  }
  const ScopedOracleGpuSwitch unknown("maybe");
  EXPECT_TRUE(oracle_gpu_allowed()) << "an unknown value is noted and read as allowed";
}

// A product above the cut-off, its operands and a non-zero C (beta 1 reads it).
struct LargeProduct {
  static constexpr std::int64_t m = 512, n = 512,
                                k = 512;  // 2^27 multiply-adds: at the GPU cut-off
  std::vector<double> a = random_values(m * k, 1), b = random_values(n * k, 2),
                      c0 = random_values(m * n, 3);
  bool gpu(std::vector<double>& c, std::vector<double>& abs_sum,
           std::vector<double>& sum_sq) const {
    return matmul_fp64_gpu(m, n, k, {a.data(), k}, {b.data(), k, true}, c.data(), n, 1.0, 1.0,
                           {abs_sum.data(), sum_sq.data()});
  }
  void dispatch(std::vector<double>& c) const {
    matmul_fp64(m, n, k, {a.data(), k}, {b.data(), k, true}, c.data(), n, -0.5, 1.0);
  }
};

// The session's parent, a thread computing oracles while a case is timed, a CPU test: none named
// a device, so none touches the GPU, whether the machine has one or not.
TEST(MatmulFp64Dispatch, AThreadThatNamedNoDeviceStaysOnTheCpu) {
  ASSERT_EQ(oracle_gpu_device(), -1) << "no thread names a device unless it says so";
  const LargeProduct p;
  ASSERT_GE(static_cast<double>(p.m * p.n * p.k), kGpuMinMultiplyAdds);
  auto c = p.c0, abs_sum = p.c0, sum_sq = p.c0;
  const auto runs = matmul_fp64_gpu_runs();
  EXPECT_FALSE(p.gpu(c, abs_sum, sum_sq));
  EXPECT_EQ(c, p.c0);
  EXPECT_EQ(abs_sum, p.c0);
  p.dispatch(c);
  EXPECT_NE(c, p.c0) << "the product was computed, on the CPU";
  EXPECT_EQ(matmul_fp64_gpu_runs(), runs);
}

// Without a device the GPU path says it could not run and leaves C and the magnitudes as they
// were, even on a thread that named device 0; matmul_fp64 above the cut-off then gives exactly
// what the CPU gives with the GPU off.
TEST(MatmulFp64Dispatch, WithoutAGpuTheProductRunsOnTheCpu) {
  std::string why;
  if (cuda_device_count(&why) > 0)
    GTEST_SKIP() << "a GPU is here: tests/gpu/matmul_fp64_gpu_test.cpp covers it";
  const ScopedOracleGpuDevice device(0);
  const LargeProduct p;
  auto c = p.c0, abs_sum = p.c0, sum_sq = p.c0;
  EXPECT_FALSE(p.gpu(c, abs_sum, sum_sq));
  EXPECT_EQ(c, p.c0);
  EXPECT_EQ(abs_sum, p.c0);
  EXPECT_EQ(sum_sq, p.c0);

  auto dispatched = p.c0, on_cpu = p.c0;
  {
    const ScopedOracleGpuSwitch unset(nullptr);
    p.dispatch(dispatched);
  }
  {
    const ScopedOracleGpuSwitch off("0");
    p.dispatch(on_cpu);
  }
  EXPECT_EQ(std::memcmp(dispatched.data(), on_cpu.data(), on_cpu.size() * sizeof(double)), 0);
  EXPECT_NE(dispatched, p.c0) << "the product was computed";
  EXPECT_EQ(matmul_fp64_gpu_runs(), 0);
}

}  // namespace
}  // namespace kwb::ref
