// The CUPTI timer agrees with CUDA events on a long kernel (within 2%), and for a tiny kernel
// reports the kernel's own few microseconds rather than launch overhead.
#include <gtest/gtest.h>

#include "harness/record/json_report.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace kwb {
namespace {

CaseRecord run_one(const std::string& timer, const std::string& axes) {
  const test::TempDir dir;
  const auto out = dir.path();
  const auto result = test::run_command(std::string(KWB_CLI_PATH) +
      " run --op rmsnorm_fwd --variant fused_v1_row_per_block --dtype fp32 " + axes +
      " --mode hot --preset default --timer " + timer + " --datasheet-ceilings --out " + out.string());
  EXPECT_EQ(result.exit_code, 0) << result.output;
  const Report report = read_report_json(out / "report.json");
  EXPECT_EQ(report.cases.size(), 1u);
  return report.cases.at(0);
}

TEST(TimerAgreement, CuptiAndEventsAgreeWithinTwoPercentOnALongKernel) {
  KWB_REQUIRE_GPU();
  // About 4 GiB of traffic: a couple of milliseconds, where launch overhead is noise.
  const std::string axes = "--axis rows=32768 --axis cols=16384";
  const CaseRecord cupti = run_one("cupti", axes);
  const CaseRecord events = run_one("events", axes);
  ASSERT_TRUE(cupti.timing && events.timing);
  EXPECT_EQ(cupti.timing->timer, "cupti");
  EXPECT_EQ(events.timing->timer, "cuda_events");
  EXPECT_GT(cupti.timing->span.median, 1000.0) << "the kernel should run for over a millisecond";
  const double ratio = events.timing->span.median / cupti.timing->span.median;
  EXPECT_NEAR(ratio, 1.0, 0.02) << "cupti " << cupti.timing->span.median << " us, events "
                                << events.timing->span.median << " us";
}

TEST(TimerAgreement, TinyKernelIsTimedByItsOwnDurationNotLaunchOverhead) {
  KWB_REQUIRE_GPU();
  const CaseRecord tiny = run_one("cupti", "--axis rows=1 --axis cols=512");
  ASSERT_TRUE(tiny.timing.has_value());
  EXPECT_EQ(tiny.timing->kernels_per_sample, 1);
  // A one-block kernel over 2 KB runs for a few microseconds; launch overhead alone is more.
  EXPECT_LT(tiny.timing->span.median, 8.0) << tiny.timing->span.median << " us";
  EXPECT_GT(tiny.timing->span.median, 0.3);
}

TEST(TimerAgreement, BaselineSampleCountsEveryLaunch) {
  KWB_REQUIRE_GPU();
  const test::TempDir dir;
  const auto out = dir.path();
  const auto result = test::run_command(std::string(KWB_CLI_PATH) +
      " run --op rmsnorm_fwd --variant baseline_eager_8_launches --dtype bf16,fp32"
      " --axis rows=1024 --axis cols=4096 --preset quick --datasheet-ceilings --out " + out.string());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const Report report = read_report_json(out / "report.json");
  ASSERT_EQ(report.cases.size(), 2u);
  for (const auto& r : report.cases) {
    ASSERT_TRUE(r.timing.has_value()) << r.reason;
    EXPECT_EQ(r.timing->kernels_per_sample, r.dtype == DType::fp32 ? 6 : 8) << r.nvtx_range;
    EXPECT_GE(r.timing->span.median, r.timing->busy.median);
    EXPECT_GE(r.timing->kernel_sum.median * 1.0001, r.timing->busy.median);
  }
}

}  // namespace
}  // namespace kwb
