// The session-start short copy (check_copy_ceiling) in this process: its error path throws an
// error that names the failed step, with its stream and buffers released on the way out
// (RAII), so the process goes on to measure again on the same context.
//
// No CUDA call counts a process's live streams, so the release itself cannot be asserted; what is
// asserted is that the error path is taken (after the stream was made) and leaves a usable
// context behind.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "harness/worker/measure/ceilings_measure.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace kwb {
namespace {

TEST(CopyCheck, AFailedCheckThrowsNamingTheStepAndTheNextCheckRuns) {
  KWB_REQUIRE_GPU();
  cudaSetDevice(0);
  const DeviceInfo device = query_device(0);
  // 1. An L2 no GPU has: the flush buffer (2 x L2) cannot be allocated, after the stream was made.
  DeviceInfo impossible = device;
  impossible.l2_bytes = std::int64_t{1} << 50;
  for (int i = 0; i < 3; ++i) {
    try {
      check_copy_ceiling(impossible, TimerKind::events);
      FAIL() << "a 2 PiB flush buffer cannot be allocated";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot allocate the"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("L2 flush buffer"), std::string::npos) << e.what();
    }
    cudaGetLastError();  // the failed cudaMalloc's error is not sticky; clear it for the next call
  }
  // 2. The context is still usable: the real check runs and reads a plausible copy rate.
  const CopyCheck check = check_copy_ceiling(device, TimerKind::events);
  EXPECT_GT(check.copy_gbps, 100) << check.method;
  EXPECT_FALSE(check.method.empty());
}

}  // namespace
}  // namespace kwb
