// Where a test's oracle products run: KWB_ORACLE_GPU and this thread's oracle device, each set
// for one scope and put back after it.
//
//   const test::ScopedOracleGpuDevice device(0);   // this thread may use GPU 0 (the worker's role)
//   { const test::ScopedOracleGpuSwitch off("0"); /* every product on the CPU */ }
#pragma once

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "harness/catalogue/oracle_device.hpp"

namespace kwb::test {

// n seeded standard-normal fp64 values: the operands of the products the tests compare.
inline std::vector<double> random_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> dist;
  std::vector<double> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

// KWB_ORACLE_GPU set to `value` (nullptr: unset).
class ScopedOracleGpuSwitch {
 public:
  explicit ScopedOracleGpuSwitch(const char* value) {
    if (const char* old = std::getenv(kName)) saved_ = old;
    if (value)
      ::setenv(kName, value, 1);
    else
      ::unsetenv(kName);
  }
  ~ScopedOracleGpuSwitch() {
    if (saved_)
      ::setenv(kName, saved_->c_str(), 1);
    else
      ::unsetenv(kName);
  }
  ScopedOracleGpuSwitch(const ScopedOracleGpuSwitch&) = delete;
  ScopedOracleGpuSwitch& operator=(const ScopedOracleGpuSwitch&) = delete;

 private:
  static constexpr const char* kName = "KWB_ORACLE_GPU";
  std::optional<std::string> saved_;
};

// This thread's oracle device (harness/catalogue/oracle_device.hpp) set to `device`.
class ScopedOracleGpuDevice {
 public:
  explicit ScopedOracleGpuDevice(int device) : saved_(oracle_gpu_device()) {
    set_oracle_gpu_device(device);
  }
  ~ScopedOracleGpuDevice() { set_oracle_gpu_device(saved_); }
  ScopedOracleGpuDevice(const ScopedOracleGpuDevice&) = delete;
  ScopedOracleGpuDevice& operator=(const ScopedOracleGpuDevice&) = delete;

 private:
  int saved_;
};

}  // namespace kwb::test
