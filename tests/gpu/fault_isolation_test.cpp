// A sweep survives a kernel that faults (illegal address), fails a device assert, or hangs:
// each is recorded as failed with its error, and every other case still runs and passes.
#include <gtest/gtest.h>

#include "harness/record/journal_reader.hpp"
#include "harness/record/json_report.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace kwb {
namespace {

TEST(FaultIsolation, SweepContinuesPastFaultsAndHangsAndRecordsThem) {
  KWB_REQUIRE_GPU();
  // 1. A sweep where the faulting variants sit between good cases.
  const test::TempDir dir;
  const auto out = dir.path();
  const std::string cmd = std::string(KWB_CLI_PATH) +
      " run --op rmsnorm_fwd --variant fused_v2_vec16,test_fault_illegal_address,"
      "test_fault_device_assert,test_hang --include-test-variants --dtype bf16"
      " --axis rows=256 --axis cols=1024,4100 --preset quick --case-timeout 8 --out " + out.string();
  const auto result = test::run_command(cmd);

  // 2. Exit code 1 (cases failed), and both reports hold every planned case.
  EXPECT_EQ(result.exit_code, 1) << result.output;
  const Report report = read_report_json(out / "report.json");
  ASSERT_EQ(report.cases.size(), 8u) << result.output;
  EXPECT_TRUE(report.run.complete);
  EXPECT_EQ(read_journal(out / "journal.jsonl").size(), 8u);

  // 3. Each fault is named in its record; the good variant passed at both shapes.
  int good = 0;
  for (const auto& r : report.cases) {
    if (r.variant == "fused_v2_vec16") {
      EXPECT_EQ(r.disposition, Disposition::passed) << r.reason;
      good += r.disposition == Disposition::passed;
    } else {
      EXPECT_EQ(r.disposition, Disposition::failed) << r.variant;
    }
    if (r.variant == "test_fault_illegal_address")
      EXPECT_NE(r.reason.find("cudaErrorIllegalAddress"), std::string::npos) << r.reason;
    if (r.variant == "test_fault_device_assert")
      EXPECT_NE(r.reason.find("cudaErrorAssert"), std::string::npos) << r.reason;
    if (r.variant == "test_hang") EXPECT_NE(r.reason.find("watchdog"), std::string::npos) << r.reason;
  }
  EXPECT_EQ(good, 2);
}

}  // namespace
}  // namespace kwb
