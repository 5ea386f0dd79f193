// Shared pieces of the GPU tests: skip (with the reason) where there is no GPU; commands and
// temp folders come from tests/support.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "harness/worker/measure/device_info.hpp"
#include "tests/support/command.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb::test {

// GTEST_SKIP needs to be in the test body: this macro puts it there.
#define KWB_REQUIRE_GPU()                                                          \
  do {                                                                             \
    std::string kwb_no_gpu_reason;                                                 \
    if (::kwb::cuda_device_count(&kwb_no_gpu_reason) == 0)                         \
      GTEST_SKIP() << "needs a CUDA GPU: " << kwb_no_gpu_reason;                   \
  } while (0)

}  // namespace kwb::test
