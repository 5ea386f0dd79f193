// `kwb compare --confirm` end to end on a machine without a GPU: its flags, and every refusal
// that comes before the GPU (each names what, where and how to fix it, exit 2), then the no-GPU
// refusal itself. The measurement is proven on a GPU (tests/gpu/compare_confirm_test.cpp).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>

#include "cli/confirm_builds.hpp"
#include "harness/record/json_report.hpp"
#include "harness/record/version.hpp"
#include "harness/worker/measure/device_info.hpp"
#include "tests/reports/compare/compare_test_support.hpp"
#include "tests/support/command.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

using test::CommandResult;
using test::noisy_samples;
using test::scaled;
using test::shell_quote;

class CompareConfirmCli : public ::testing::Test {
 protected:
  // A report of this build (its git SHA) holding one real case, rmsnorm_fwd fused_v2_vec16 bf16
  // 4096x4096, with its samples scaled by `factor`.
  std::string write(const std::string& name, double factor, const std::string& variant = "fused_v2_vec16",
                    const std::string& preset = "quick", const std::string& sha = kGitSha) {
    Report r = test::empty_report();
    r.run.git_sha = sha;
    r.run.settings["preset"] = preset;
    r.run.settings["seed"] = "1";
    r.cases = {test::timed_case("rmsnorm_fwd", variant, 4096, scaled(noisy_samples(5, 60, 40.0, 0.01), factor))};
    r.cases[0].timing->preset = preset;
    const auto path = dir_ / name;
    write_report_json(path, r);
    return path.string();
  }
  CommandResult kwb(const std::string& args) { return test::run_command(shell_quote(KWB_CLI_PATH) + " compare " + args); }
  static bool has(const CommandResult& r, const std::string& part) { return r.output.find(part) != std::string::npos; }
  test::TempDir dir_;
};

TEST(ConfirmBuilds, VersionOutputGivesTheShaOfAKwbOnly) {
  EXPECT_EQ(cli::sha_from_version_output("0.1.0 (abc123def)\n"), "abc123def");
  EXPECT_EQ(cli::sha_from_version_output("0.1.0 (unknown)"), "unknown");
  EXPECT_FALSE(cli::sha_from_version_output("true (GNU coreutils) 9.1\nCopyright (C) 2022"));
  EXPECT_FALSE(cli::sha_from_version_output("0.1.0"));
  EXPECT_FALSE(cli::sha_from_version_output("0.1.0 ()"));
}

TEST(ConfirmBuilds, ListCaseArgsPlanExactlyTheCase) {
  CaseRequest r;
  r.op = "test_seq_sum";
  r.variant = "test_atomic_scatter";
  r.shape = Shape{{{"batch", std::int64_t{2}}, {"layout", AxisValue(std::string("bhsd"))}}};
  r.tunables = {{"block", 256}};
  r.preset = "quick";
  r.seed = 9;
  r.include_test_variants = true;
  const std::vector<std::string> expected = {
      "run", "--op", "test_seq_sum", "--variant", "test_atomic_scatter", "--dtype", "fp32", "--axis", "batch=2",
      "--axis", "layout=bhsd", "--axis", "block=256", "--mode", "cold", "--preset", "quick", "--seed", "9",
      "--flush", "dirty", "--include-test-variants", "--list-cases"};
  EXPECT_EQ(cli::list_case_args(r), expected);
}

TEST_F(CompareConfirmCli, ItsSettingsNeedConfirm) {
  const auto base = write("base.json", 1.0), next = write("new.json", 1.0);
  for (const std::string flag : {"--base-kwb /bin/true", "--new-kwb x", "--confirm-rounds 6", "--case-timeout 30",
                                 "--progress lines"}) {
    const CommandResult r = kwb(base + " " + next + " " + flag);
    EXPECT_EQ(r.exit_code, 2) << flag << ": " << r.output;
    EXPECT_TRUE(has(r, "is a setting of --confirm")) << r.output;
    EXPECT_TRUE(has(r, "add --confirm")) << r.output;
  }
}

TEST_F(CompareConfirmCli, RoundsBelowThreeOrNotANumberAreRefused) {
  const auto base = write("base.json", 1.0), next = write("new.json", 1.0);
  for (const std::string rounds : {"2", "0", "abc", "101"}) {
    const CommandResult r = kwb(base + " " + next + " --confirm --confirm-rounds " + rounds);
    EXPECT_EQ(r.exit_code, 2) << rounds << ": " << r.output;
    EXPECT_TRUE(has(r, "--confirm-rounds")) << r.output;
  }
}

TEST_F(CompareConfirmCli, AnUnknownProgressStyleIsRefusedBeforeAnyReportIsRead) {
  const CommandResult r = kwb("no-base.json no-new.json --confirm --progress fancy");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "--progress: unknown value 'fancy'; use bar")) << r.output;
}

TEST_F(CompareConfirmCli, NothingToReMeasureNeedsNoGpu) {
  const auto base = write("base.json", 1.0), next = write("new.json", 1.0);
  const CommandResult r = kwb(base + " " + next + " --confirm");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r, "--confirm: no case to re-measure")) << r.output;
  EXPECT_TRUE(has(r, "Result: no regression")) << r.output;
}

TEST_F(CompareConfirmCli, ReportsOfAnotherBuildNeedThatBuildsKwb) {
  const auto base = write("base.json", 1.0, "fused_v2_vec16", "quick", "0123abcd"),
             next = write("new.json", 1.06);
  const CommandResult r = kwb(base + " " + next + " --confirm");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "BASE (" + base + ") was measured by a kwb built from 0123abcd")) << r.output;
  EXPECT_TRUE(has(r, "Pass --base-kwb PATH, a kwb built from 0123abcd")) << r.output;
}

TEST_F(CompareConfirmCli, AGivenKwbOfAnotherShaIsRefused) {
  const auto base = write("base.json", 1.0), next = write("new.json", 1.06);
  const auto fake = dir_ / "old-kwb";
  std::ofstream(fake) << "#!/bin/sh\necho '0.1.0 (deadbeef)'\n";
  ::chmod(fake.c_str(), 0755);
  const CommandResult r = kwb(base + " " + next + " --confirm --base-kwb " + fake.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "this kwb is built from deadbeef")) << r.output;
  EXPECT_TRUE(has(r, std::string("pass a kwb built from ") + kGitSha)) << r.output;

  const CommandResult other = kwb(base + " " + next + " --confirm --base-kwb /bin/true");
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_TRUE(has(other, "did not print a kwb version")) << other.output;

  const CommandResult missing = kwb(base + " " + next + " --confirm --new-kwb " + (dir_ / "nope").string());
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_TRUE(has(missing, "not an executable file")) << missing.output;
}

TEST_F(CompareConfirmCli, SettingsThatDifferAreRefused) {
  const auto base = write("base.json", 1.0, "fused_v2_vec16", "quick"),
             next = write("new.json", 1.06, "fused_v2_vec16", "default");
  const CommandResult r = kwb(base + " " + next + " --confirm");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "preset: BASE quick, NEW default")) << r.output;
}

TEST_F(CompareConfirmCli, ACaseTheBuildCannotMeasureIsRefusedWithItsMessage) {
  const auto base = write("base.json", 1.0, "fused_v9_no_such"), next = write("new.json", 1.06, "fused_v9_no_such");
  const CommandResult r = kwb(base + " " + next + " --confirm");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "BASE's build")) << r.output;
  EXPECT_TRUE(has(r, "cannot re-measure case rmsnorm_fwd:fused_v9_no_such:bf16:4096x4096")) << r.output;
  EXPECT_TRUE(has(r, "fused_v9_no_such")) << "the build's own message: " << r.output;
  EXPECT_TRUE(has(r, "pass --base-kwb PATH")) << r.output;
}

TEST_F(CompareConfirmCli, NoGpuIsRefusedAfterEveryOtherCheck) {
  std::string reason;
  if (cuda_device_count(&reason) > 0) GTEST_SKIP() << "this machine has a GPU: tests/gpu/compare_confirm_test.cpp measures";
  const auto base = write("base.json", 1.0), next = write("new.json", 1.06);
  const CommandResult r = kwb(base + " " + next + " --confirm");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "--confirm: no usable CUDA GPU on this machine")) << r.output;
  EXPECT_TRUE(has(r, "drop --confirm")) << r.output;
  EXPECT_FALSE(has(r, "Result:")) << "nothing judged after a refusal: " << r.output;
}

}  // namespace
}  // namespace kwb
