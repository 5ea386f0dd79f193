// `kwb compare --confirm` on a GPU: an A/A pair whose reports read "slower" (a flaky first
// verdict, as a power-throttled pair gives) is confirmed "same" by interleaved re-measurement,
// and a 5% slowdown injected into one side (KWB_TEST_SLOWDOWN) is confirmed "slower" (exit 1);
// a round above its roof is a failure, not evidence; a case that fits in device memory once but
// not twice is still confirmed (each side measures it with the other's worker stopped).
#include <gtest/gtest.h>

#include <sstream>

#include "harness/record/json_report.hpp"
#include "harness/record/stats.hpp"
#include "harness/worker/measure/device_info.hpp"
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

// `report` as a throttled rerun of it reads: every sample 6% longer.
Report six_percent_slower(Report report) {
  for (CaseRecord& r : report.cases) {
    if (!r.timing) continue;
    for (double& x : r.timing->samples_us) x *= 1.06;
    r.timing->span = summarize(r.timing->samples_us);
  }
  return report;
}

TEST(CompareConfirm, ARoundAboveItsRoofIsAFailureNotEvidence) {
  KWB_REQUIRE_GPU();
  const test::TempDir dir;
  const std::string a = (dir.path() / "a").string();
  // 1. A variant whose result is computed in prepare() (its launches copy 64 KiB for 256 MiB of
  //    input): `kwb run` fails it on the roof rule, keeping its samples.
  ASSERT_EQ(test::run_command(kwb() + " run --op test_colsum --variant test_simple,test_result_precomputed_in_prepare "
                                      "--include-test-variants --dtype fp32 --axis rows=8192 --axis cols=8192 "
                                      "--preset quick --datasheet-ceilings --out " + a)
                .exit_code, 1);
  // 2. Reports that took it for passed (as a build without the roof rule wrote them), NEW 6% slower.
  Report base = read_report_json(a + "/report.json");
  for (CaseRecord& r : base.cases) {
    ASSERT_TRUE(r.timing) << r.variant << ": " << r.reason;
    if (r.variant != "test_result_precomputed_in_prepare") continue;
    ASSERT_NE(r.reason.find("above its roof"), std::string::npos) << r.reason;
    r.disposition = Disposition::passed;
    r.reason.clear();
  }
  const std::string base_path = (dir.path() / "base.json").string(), new_path = (dir.path() / "new.json").string();
  write_report_json(base_path, base);
  write_report_json(new_path, six_percent_slower(base));
  // The cheat times ~1 us: 6% of it is under compare's 0.5 us minimum effect, which would call it
  // "same" and leave it out of the suspects; --min-us 0 lets the 6% count.
  const std::string gate = " --min-us 0";
  ASSERT_EQ(test::run_command(kwb() + " compare " + base_path + " " + new_path + gate).exit_code, 1);
  // 3. Confirmed: its rounds are judged as `kwb run` judges a case, so the cheat fails in NEW
  //    (a failure, exit 1) and is not confirmed "same"; the honest variant is confirmed same.
  const std::string builds = " --base-kwb " + kwb() + " --new-kwb " + kwb();
  const auto confirmed =
      test::run_command(kwb() + " compare " + base_path + " " + new_path + gate + " --confirm --confirm-rounds 3" + builds);
  EXPECT_EQ(confirmed.exit_code, 1) << confirmed.output;
  EXPECT_NE(confirmed.output.find("failed in NEW when re-measured"), std::string::npos) << confirmed.output;
  EXPECT_NE(confirmed.output.find("above its roof"), std::string::npos) << confirmed.output;
  EXPECT_EQ(lines_with(confirmed.output, {"same (confirmed)", "test_result_precomputed_in_prepare"}), 0)
      << confirmed.output;
  EXPECT_EQ(lines_with(confirmed.output, {"same (confirmed)", "test_colsum:test_simple"}), 1) << confirmed.output;
}

TEST(CompareConfirm, ACaseThatFitsOnceButNotTwiceIsConfirmed) {
  KWB_REQUIRE_GPU();
  // 1. rmsnorm_fwd bf16 whose x and y take 60% of this GPU's memory: one worker holds it, two
  //    cannot (query_device makes no context: this process holds no GPU memory).
  const DeviceInfo gpu = query_device(0);
  constexpr std::int64_t kCols = 8192;
  const std::int64_t rows = static_cast<std::int64_t>(0.6 * static_cast<double>(gpu.global_mem_bytes)) / (4 * kCols) /
                            1024 * 1024;
  const std::string cases = " run --op rmsnorm_fwd --variant fused_v2_vec16 --dtype bf16 --axis rows=" +
                            std::to_string(rows) + " --axis cols=8192 --preset quick --datasheet-ceilings";
  const test::TempDir dir;
  const std::string a = (dir.path() / "a").string();
  const auto run = test::run_command(kwb() + cases + " --out " + a);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string flaky_path = (dir.path() / "flaky.json").string();
  write_report_json(flaky_path, six_percent_slower(read_report_json(a + "/report.json")));
  ASSERT_EQ(test::run_command(kwb() + " compare " + a + "/report.json " + flaky_path).exit_code, 1);
  // 2. Confirmed: the second side's first turn is skipped for memory beside the first's worker,
  //    so the workers take turns alone, and the A/A case is confirmed same (not left ambiguous).
  const std::string builds = " --base-kwb " + kwb() + " --new-kwb " + kwb();
  const auto confirmed = test::run_command(kwb() + " compare " + a + "/report.json " + flaky_path +
                                           " --confirm --confirm-rounds 4" + builds);
  EXPECT_EQ(confirmed.exit_code, 0) << confirmed.output;
  EXPECT_NE(confirmed.output.find("does not fit in device memory beside the other build's worker"), std::string::npos)
      << confirmed.output;
  EXPECT_EQ(lines_with(confirmed.output, {"same (confirmed)", "rmsnorm_fwd:fused_v2_vec16"}), 1) << confirmed.output;
  EXPECT_EQ(confirmed.output.find("skipped it"), std::string::npos) << confirmed.output;
}

}  // namespace
}  // namespace kwb
