// Where the oracles' fp64 products run: KWB_ORACLE_GPU's reading, and, on a machine without a
// GPU (CI), a GPU path that declines without touching C, so that a product above the GPU cut-off
// still gets the CPU's result. (The GPU side is tests/gpu/matmul_fp64_gpu_test.cpp.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "harness/worker/measure/device_info.hpp"
#include "reference/matmul_fp64.hpp"
#include "reference/matmul_fp64_gpu.hpp"

namespace kwb::ref {
namespace {

// KWB_ORACLE_GPU set (or unset, with nullptr) for one scope, and put back after it.
class ScopedOracleGpu {
 public:
  explicit ScopedOracleGpu(const char* value) {
    if (const char* old = std::getenv(kName)) saved_ = old;
    if (value) ::setenv(kName, value, 1);
    else ::unsetenv(kName);
  }
  ~ScopedOracleGpu() {
    if (saved_) ::setenv(kName, saved_->c_str(), 1);
    else ::unsetenv(kName);
  }

 private:
  static constexpr const char* kName = "KWB_ORACLE_GPU";
  std::optional<std::string> saved_;
};

std::vector<double> random_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> dist;
  std::vector<double> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

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
    const ScopedOracleGpu off("0");
    EXPECT_FALSE(oracle_gpu_allowed());
  }
  {
    const ScopedOracleGpu unset(nullptr);
    EXPECT_TRUE(oracle_gpu_allowed());
  }
  const ScopedOracleGpu unknown("maybe");
  EXPECT_TRUE(oracle_gpu_allowed()) << "an unknown value is noted and read as allowed";
}

// Without a device the GPU path says it could not run and leaves C and the magnitudes as they
// were; matmul_fp64 above the cut-off then gives exactly what the CPU gives with the GPU off.
TEST(MatmulFp64Dispatch, WithoutAGpuTheProductRunsOnTheCpu) {
  std::string why;
  if (cuda_device_count(&why) > 0) GTEST_SKIP() << "a GPU is here: tests/gpu/matmul_fp64_gpu_test.cpp covers it";
  const std::int64_t m = 512, n = 512, k = 512;  // 2^27 multiply-adds: at the GPU cut-off
  ASSERT_GE(static_cast<double>(m * n * k), kGpuMinMultiplyAdds);
  const auto a = random_values(m * k, 1), b = random_values(n * k, 2), c0 = random_values(m * n, 3);
  auto c = c0, abs_sum = c0, sum_sq = c0;
  EXPECT_FALSE(matmul_fp64_gpu(m, n, k, {a.data(), k}, {b.data(), k, true}, c.data(), n, 1.0, 1.0,
                               {abs_sum.data(), sum_sq.data()}));
  EXPECT_EQ(c, c0);
  EXPECT_EQ(abs_sum, c0);
  EXPECT_EQ(sum_sq, c0);

  auto dispatched = c0, on_cpu = c0;
  {
    const ScopedOracleGpu unset(nullptr);
    matmul_fp64(m, n, k, {a.data(), k}, {b.data(), k, true}, dispatched.data(), n, -0.5, 1.0);
  }
  {
    const ScopedOracleGpu off("0");
    matmul_fp64(m, n, k, {a.data(), k}, {b.data(), k, true}, on_cpu.data(), n, -0.5, 1.0);
  }
  EXPECT_EQ(std::memcmp(dispatched.data(), on_cpu.data(), on_cpu.size() * sizeof(double)), 0);
  EXPECT_NE(dispatched, c0) << "the product was computed";
  EXPECT_EQ(matmul_fp64_gpu_runs(), 0);
}

}  // namespace
}  // namespace kwb::ref
