// Both L2 flushes run end to end and are recorded: the record names the flush, the report's
// settings describe it, the repro command carries a clean flush, and the SM clock is read.
#include <gtest/gtest.h>

#include "harness/record/json_report.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace kwb {
namespace {

Report run_with_flush(const std::string& flush, const std::filesystem::path& out) {
  const auto result = test::run_command(std::string(KWB_CLI_PATH) +
      " run --op rmsnorm_fwd --variant fused_v2_vec16 --dtype bf16 --axis rows=2048 --axis cols=4096"
      " --preset quick --datasheet-ceilings --seed 77 --flush " + flush + " --out " + out.string());
  EXPECT_EQ(result.exit_code, 0) << result.output;
  return read_report_json(out / "report.json");
}

TEST(Flush, CleanAndDirtyBothRunAndAreRecorded) {
  KWB_REQUIRE_GPU();
  const test::TempDir dir;
  for (const std::string flush : {"dirty", "clean"}) {
    SCOPED_TRACE(flush);
    const Report report = run_with_flush(flush, dir.path() / flush);
    ASSERT_EQ(report.cases.size(), 1u);
    const CaseRecord& c = report.cases[0];
    ASSERT_EQ(c.disposition, Disposition::passed) << c.reason;
    ASSERT_TRUE(c.timing.has_value());
    EXPECT_EQ(c.timing->flush, flush);
    EXPECT_GT(c.timing->span.median, 0);
    EXPECT_EQ(report.run.settings.at("l2_flush").rfind(flush + ":", 0), 0u) << report.run.settings.at("l2_flush");
    EXPECT_EQ(c.repro.find("--flush clean") != std::string::npos, flush == "clean") << c.repro;
    if (c.timing->clocks) {  // NVML is there on every driver install, but absent is legal
      EXPECT_GT(c.timing->clocks->sm_min_mhz, 0);
      EXPECT_LE(c.timing->clocks->sm_min_mhz, c.timing->clocks->sm_max_mhz);
      EXPECT_EQ(c.timing->clocks->samples, c.timing->span.count);
      EXPECT_LE(c.timing->clocks->throttled_samples, c.timing->clocks->samples);
    }
  }
}

TEST(Flush, HotModeRecordsNoFlush) {
  KWB_REQUIRE_GPU();
  const test::TempDir dir;
  const auto result = test::run_command(std::string(KWB_CLI_PATH) +
      " run --op rmsnorm_fwd --variant fused_v2_vec16 --dtype bf16 --axis rows=2048 --axis cols=4096"
      " --preset quick --datasheet-ceilings --mode hot --out " + dir.path().string());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const Report report = read_report_json(dir.path() / "report.json");
  ASSERT_EQ(report.cases.size(), 1u);
  ASSERT_TRUE(report.cases[0].timing.has_value());
  EXPECT_EQ(report.cases[0].timing->flush, "none");
}

}  // namespace
}  // namespace kwb
