// `kwb compare --confirm` on a GPU: an A/A pair whose reports read "slower" (a flaky first
// verdict, as a power-throttled pair gives) is confirmed "same" by interleaved re-measurement,
// and a 5% slowdown injected into one side (KWB_TEST_SLOWDOWN) is confirmed "slower" (exit 1).
#include <gtest/gtest.h>

#include <sstream>

#include "harness/record/json_report.hpp"
#include "harness/record/stats.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace kwb {
namespace {

// 256 MiB moved per launch, far beyond the L2: the slowdown switch calibrates hot, and a case whose
// data fit in L2 would gain less than the 5% cold.
const std::string kCases =
    " run --op rmsnorm_fwd --variant fused_v2_vec16,baseline_eager_8_launches --dtype bf16 --axis rows=16384"
    " --axis cols=4096 --preset quick --datasheet-ceilings";

std::string kwb() { return test::shell_quote(KWB_CLI_PATH); }

// The lines of `text` that hold every one of `parts`.
int lines_with(const std::string& text, const std::vector<std::string>& parts) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    bool all = true;
    for (const auto& p : parts) all = all && line.find(p) != std::string::npos;
    n += all;
  }
  return n;
}

TEST(CompareConfirm, AaFlakeIsConfirmedSameAndAnInjectedSlowdownIsConfirmedSlower) {
  KWB_REQUIRE_GPU();
  const test::TempDir dir;
  const std::string a = (dir.path() / "a").string(), b = (dir.path() / "b").string(), c = (dir.path() / "c").string();
  // 1. Two runs of one build (A/A), and a third with fused_v2_vec16 slowed by 5% on purpose.
  ASSERT_EQ(test::run_command(kwb() + kCases + " --out " + a).exit_code, 0);
  ASSERT_EQ(test::run_command(kwb() + kCases + " --out " + b).exit_code, 0);
  ASSERT_EQ(test::run_command("KWB_TEST_SLOWDOWN=rmsnorm_fwd:fused_v2_vec16:0.05 " + kwb() + kCases + " --out " + c)
                .exit_code, 0);

  // 2. The A/A pair as a throttled pair reads: NEW's samples 6% longer in its report.
  Report flaky = read_report_json(b + "/report.json");
  for (CaseRecord& r : flaky.cases) {
    ASSERT_TRUE(r.timing) << r.reason;
    for (double& x : r.timing->samples_us) x *= 1.06;
    r.timing->span = summarize(r.timing->samples_us);
  }
  const std::string flaky_path = (dir.path() / "flaky.json").string();
  write_report_json(flaky_path, flaky);
  // The explicit builds keep the test independent of whether this build knows its git SHA.
  const std::string builds = " --base-kwb " + kwb() + " --new-kwb " + kwb();
  const auto first = test::run_command(kwb() + " compare " + a + "/report.json " + flaky_path);
  ASSERT_EQ(first.exit_code, 1) << "the flaky pair must read slower first:\n" << first.output;

  // 3. Confirmed: the same build on both sides, interleaved, is the same.
  const auto aa = test::run_command(kwb() + " compare " + a + "/report.json " + flaky_path + " --confirm" + builds);
  EXPECT_EQ(aa.exit_code, 0) << aa.output;
  EXPECT_EQ(lines_with(aa.output, {"same (confirmed)", "rmsnorm_fwd:"}), 2) << aa.output;
  EXPECT_EQ(lines_with(aa.output, {"first verdict (from the reports): slower"}), 2) << aa.output;
  EXPECT_NE(aa.output.find("--confirm: 2 cases re-measured"), std::string::npos) << aa.output;

  // 4. Confirmed: NEW's worker runs with NEW's report's slowdown, and the case is slower.
  const auto slow = test::run_command(kwb() + " compare " + a + "/report.json " + c + "/report.json --confirm" + builds);
  EXPECT_EQ(slow.exit_code, 1) << slow.output;
  EXPECT_EQ(lines_with(slow.output, {"slower (confirmed)", "rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096"}), 1)
      << slow.output;
  EXPECT_EQ(lines_with(slow.output, {"slower", "baseline_eager_8_launches"}), 0) << slow.output;
  EXPECT_NE(slow.output.find("Result: regression"), std::string::npos) << slow.output;
}

}  // namespace
}  // namespace kwb
