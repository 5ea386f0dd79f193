// `kwb profile --run` on a GPU with Nsight Compute: a streaming kernel's counters from kwb's own
// counter pass and from ncu (the printed command, run) agree within 2% on every byte and
// instruction count (DRAM bytes written aside: kwb's count includes the write-back of the lines
// left dirty in the L2, ncu's does not), and ncu's figures land in the report's case. Skipped without a GPU or
// without ncu on PATH.
#include <gtest/gtest.h>

#include <cstdlib>

#include "gpu_test_support.hpp"
#include "harness/record/json_report.hpp"
#include "reports/profile/counter_comparison.hpp"

namespace kwb {
namespace {

bool ncu_on_path() { return test::run_command("command -v ncu").exit_code == 0; }

TEST(ProfileNcu, KwbAndNcuCountTheSameBytesOfAStreamingKernel) {
  KWB_REQUIRE_GPU();
  if (!ncu_on_path()) GTEST_SKIP() << "needs Nsight Compute (ncu) on PATH";
  test::TempDir dir;
  const std::string kwb = test::shell_quote(KWB_CLI_PATH);
  const auto run = test::run_command(kwb + " run --op rmsnorm_fwd --variant fused_v2_vec16 --dtype bf16 --axis "
                                           "rows=16384 --axis cols=4096 --counters memory --preset quick "
                                           "--datasheet-ceilings --out " + test::shell_quote((dir / "run").string()));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto report = dir / "run" / "report.json";
  const std::string id = "rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096";
  const auto profiled = test::run_command(kwb + " profile " + id + " --run --report " +
                                          test::shell_quote(report.string()) + " --out " +
                                          test::shell_quote((dir / "ncu").string()));
  ASSERT_EQ(profiled.exit_code, 0) << profiled.output;
  const Report after = read_report_json(report);
  ASSERT_EQ(after.cases.size(), 1u);
  const CaseRecord& c = after.cases[0];
  ASSERT_TRUE(c.counters && c.counters->unavailable.empty()) << (c.counters ? c.counters->unavailable : "none");
  ASSERT_TRUE(c.ncu_counters);
  EXPECT_EQ(c.ncu_counters->source, "ncu");
  EXPECT_EQ(c.ncu_counters->kernels.size(), 1u);
  int compared = 0;
  for (const CounterComparisonRow& row : compare_counters(&*c.counters, *c.ncu_counters)) {
    if (!row.checked) continue;
    ASSERT_TRUE(row.agrees.has_value()) << row.metric << " missing on a side";
    EXPECT_TRUE(*row.agrees) << row.metric << ": kwb " << *row.kwb << ", ncu " << *row.ncu;
    ++compared;
  }
  EXPECT_GE(compared, 8) << "the memory set's byte, sector and request counts";
  // The kernel reads and writes 128 MiB each: both tools see the reads in DRAM; kwb sees every
  // byte written reach it too, ncu all but those still dirty in the L2 when the kernel ends.
  const double bytes = 16384.0 * 4096 * 2;
  EXPECT_NEAR(c.ncu_counters->total.at("dram__bytes_read.sum") / bytes, 1.0, 0.02);
  const double kwb_written = c.counters->total.at("dram__bytes_write.sum");
  const double ncu_written = c.ncu_counters->total.at("dram__bytes_write.sum");
  EXPECT_NEAR(kwb_written / bytes, 1.0, 0.02);
  EXPECT_LE(ncu_written, kwb_written * 1.02);
  EXPECT_GE(ncu_written, kwb_written - 64.0 * 1024 * 1024) << "at most an L2's worth (50-60 MB) left dirty";
}

}  // namespace
}  // namespace kwb
