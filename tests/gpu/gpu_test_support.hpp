// Shared pieces of the GPU tests: skip (with the reason) where there is no GPU, run the kwb
// binary, read its report.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "harness/device_info.hpp"

namespace kwb::test {

// GTEST_SKIP needs to be in the test body: this macro puts it there.
#define KWB_REQUIRE_GPU()                                                          \
  do {                                                                             \
    std::string kwb_no_gpu_reason;                                                 \
    if (::kwb::cuda_device_count(&kwb_no_gpu_reason) == 0)                         \
      GTEST_SKIP() << "needs a CUDA GPU: " << kwb_no_gpu_reason;                   \
  } while (0)

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) r.output.append(buf, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("kwb-gpu-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace kwb::test
