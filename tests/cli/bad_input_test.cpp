// Hostile input to the real `kwb` binary: every case found by fuzzing the flags must exit 2 with
// a message that names the flag, what was wrong and how to fix it, before any GPU work (so these
// run on machines without a GPU, and would not start one where there is).
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "tests/support/command.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

using test::CommandResult;
using test::shell_quote;
using test::TempDir;

// `kwb <args>` run in `cwd` (args already shell-quoted where needed).
CommandResult kwb_in(const std::filesystem::path& cwd, const std::string& args) {
  return test::run_command("cd " + shell_quote(cwd.string()) + " && " + shell_quote(KWB_CLI_PATH) + " " + args);
}

::testing::AssertionResult Refused(const CommandResult& r, std::initializer_list<std::string> parts) {
  if (r.exit_code != 2) return ::testing::AssertionFailure() << "exit " << r.exit_code << ", not 2:\n" << r.output;
  for (const auto& part : parts)
    if (r.output.find(part) == std::string::npos)
      return ::testing::AssertionFailure() << "output does not mention \"" << part << "\":\n" << r.output;
  if (r.output.find("no usable CUDA GPU") != std::string::npos)
    return ::testing::AssertionFailure() << "the worker was started:\n" << r.output;
  return ::testing::AssertionSuccess();
}

class BadInput : public ::testing::Test {
 protected:
  // `kwb run <args>` with an --out of its own, so nothing lands in the working directory.
  CommandResult run(const std::string& args) {
    return kwb_in(dir_.path(), "run " + args + " --out " + shell_quote((dir_ / "out").string()));
  }
  TempDir dir_;
};

// ---- output locations ---------------------------------------------------------------------

TEST_F(BadInput, OutFolderThatCannotHoldFilesIsRefused) {
  const CommandResult r = kwb_in(dir_.path(), "run --op rmsnorm_fwd --out /proc/self");
  EXPECT_TRUE(Refused(r, {"--out", "/proc/self", "writable folder"}));
}

TEST_F(BadInput, FolderNamedWorkerLogInsideOutIsRefused) {
  std::filesystem::create_directories(dir_ / "out" / "worker.log");
  const CommandResult r = run("--op rmsnorm_fwd");
  EXPECT_TRUE(Refused(r, {"--out", "worker.log", "is a folder"}));
}

TEST_F(BadInput, FolderNamedReportJsonInsideOutIsRefused) {
  std::filesystem::create_directories(dir_ / "out" / "report.json");
  EXPECT_TRUE(Refused(run("--op rmsnorm_fwd"), {"--out", "report.json", "is a folder"}));
}

TEST_F(BadInput, EmptyOutIsRefused) {
  EXPECT_TRUE(Refused(kwb_in(dir_.path(), "run --out ''"), {"--out", "empty"}));
}

TEST_F(BadInput, CeilingsWithAnEmptyLogIsRefused) {
  EXPECT_TRUE(Refused(kwb_in(dir_.path(), "ceilings --log ''"), {"--log", "empty"}));
}

TEST_F(BadInput, CeilingsWithAFolderAsLogIsRefused) {
  std::filesystem::create_directories(dir_ / "logdir");
  EXPECT_TRUE(Refused(kwb_in(dir_.path(), "ceilings --log logdir"), {"--log", "logdir", "is a folder"}));
}

// /proc cannot hold a results/ folder, even for root (a chmod'ed folder does not stop root).
TEST(BadInputReadOnlyCwd, CeilingsInAReadOnlyWorkingDirectoryIsRefused) {
  EXPECT_TRUE(Refused(kwb_in("/proc", "ceilings"), {"--log", "results"}));
}

TEST(BadInputReadOnlyCwd, RunInAReadOnlyWorkingDirectoryIsRefused) {
  EXPECT_TRUE(Refused(kwb_in("/proc", "run --op rmsnorm_fwd"), {"--out", "results"}));
}

TEST(BadInputReadOnlyCwd, CeilingsInAFolderWithoutWritePermissionIsRefused) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into read-only folders; the /proc tests cover this";
  TempDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  const CommandResult r = kwb_in(dir.path(), "ceilings");
  std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_all);
  EXPECT_TRUE(Refused(r, {"--log"}));
}

// ---- plan size ----------------------------------------------------------------------------

TEST_F(BadInput, TwoLargeRangesAreRefusedBeforeExpandingAndAskForMaxCases) {
  const auto t0 = std::chrono::steady_clock::now();
  const CommandResult r = run("--axis rows=1:4096:+1 --axis cols=1:4096:+1");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(Refused(r, {"--max-cases", "4096 rows x 4096 cols", "10000"}));
  EXPECT_LT(seconds, 5.0) << "201M cases must be counted, not built";
}

// Accepted plans get past the planner: with an unusable --out, the refusal is then about --out.
TEST_F(BadInput, MaxCasesRaisesTheLimit) {
  const std::string sweep = "--op rmsnorm_fwd --variant fused_v2_vec16 --dtype bf16 --axis rows=1:101 --axis cols=64:6400:+64";
  EXPECT_TRUE(Refused(run(sweep), {"--max-cases", "10100 cases"}));
  EXPECT_TRUE(Refused(kwb_in(dir_.path(), "run " + sweep + " --max-cases 10100 --out /proc/self"), {"--out"}));
}

TEST_F(BadInput, MaxCasesMustBeAPositiveCountWithinTheCeiling) {
  EXPECT_TRUE(Refused(run("--max-cases 0"), {"--max-cases", "'0'"}));
  EXPECT_TRUE(Refused(run("--max-cases -4"), {"--max-cases", "'-4'"}));
  EXPECT_TRUE(Refused(run("--max-cases 99999999999999999999999"), {"--max-cases"}));
  EXPECT_TRUE(Refused(run("--max-cases 1000001"), {"--max-cases", "at most 1000000"}));
}

TEST_F(BadInput, TensorSizesThatOverflowInt64AreRefused) {
  const CommandResult r = run("--op rmsnorm_fwd --axis rows=4000000000000 --axis cols=4000000000000");
  EXPECT_TRUE(Refused(r, {"tensor 'x'", "64-bit", "--axis"}));
  EXPECT_TRUE(Refused(run("--op rmsnorm_fwd --axis rows=9223372036854775807 --axis cols=3"), {"64-bit"}));
}

// ---- numeric and named flags ---------------------------------------------------------------

TEST_F(BadInput, UnknownTimerIsRefused) {
  EXPECT_TRUE(Refused(run("--timer nsight"), {"--timer", "'nsight'", "auto, cupti or events"}));
  EXPECT_TRUE(Refused(run("--timer ''"), {"--timer"}));
}

TEST_F(BadInput, UnknownProgressStyleIsRefusedByEveryVerbThatShowsProgress) {
  EXPECT_TRUE(Refused(run("--progress fancy"), {"--progress", "'fancy'", "bar", "lines", "none"}));
  EXPECT_TRUE(Refused(run("--progress ''"), {"--progress", "''"}));
  EXPECT_TRUE(Refused(kwb_in(dir_.path(), "tune --op rmsnorm_bwd --variant fused_v2_cp_async_row_groups --progress "
                                          "bars --out t"),
                      {"--progress", "'bars'"}));
  for (const char* style : {"bar", "lines", "none", "auto"}) {  // accepted: the plan is printed, nothing run
    const CommandResult r = kwb_in(dir_.path(), std::string("run --op rmsnorm_fwd --list-cases --progress ") + style);
    EXPECT_EQ(r.exit_code, 0) << style << ": " << r.output;
  }
}

TEST_F(BadInput, NegativeOrNonNumericDeviceIsRefused) {
  EXPECT_TRUE(Refused(run("--device -1"), {"--device", "'-1'", "from 0"}));
  EXPECT_TRUE(Refused(run("--device=gpu0"), {"--device", "'gpu0'"}));
  EXPECT_TRUE(Refused(run("--device 99999999999"), {"--device"}));
  EXPECT_TRUE(Refused(kwb_in(dir_.path(), "ceilings --device -3"), {"--device", "'-3'"}));
}

TEST_F(BadInput, DeviceListsAreAllOrDistinctIndicesAndExcludeDevice) {
  EXPECT_TRUE(Refused(run("--devices 0,x"), {"--devices", "'x'", "is not a device index", "--devices 0,1"}));
  EXPECT_TRUE(Refused(run("--devices 1,1"), {"--devices", "GPU 1 is given twice"}));
  EXPECT_TRUE(Refused(run("--devices all --device 1"), {"--device", "excludes", "--devices"}));
}

TEST_F(BadInput, AMalformedTestSlowdownSwitchIsRefusedBeforeAnyWorkerStarts) {
  const auto with = [&](const std::string& value) {
    return test::run_command("cd " + shell_quote(dir_.path().string()) + " && KWB_TEST_SLOWDOWN=" + shell_quote(value) +
                             " " + shell_quote(KWB_CLI_PATH) + " run --op rmsnorm_fwd --out out");
  };
  EXPECT_TRUE(Refused(with("rmsnorm_fwd:fused_v2_vec16"), {"KWB_TEST_SLOWDOWN", "OP:VARIANT:FRACTION"}));
  EXPECT_TRUE(Refused(with("rmsnorm_fwd:fused_v2_vec16:5%"), {"fraction in (0, 1]"}));
  EXPECT_TRUE(Refused(with("rmsnorm_fwd:fused_v2_vec16:1.5"), {"fraction in (0, 1]"}));
  EXPECT_TRUE(Refused(with("rmsnorm_fwd:no_such_variant:0.05"), {"no variant 'no_such_variant'", "kwb list"}));
}

TEST_F(BadInput, CaseTimeoutMustBeFiniteAndPositive) {
  for (const char* v : {"0", "-5", "nan", "inf", "1e999", "soon"})
    EXPECT_TRUE(Refused(run(std::string("--case-timeout=") + v), {"--case-timeout", "above 0"})) << v;
  EXPECT_TRUE(Refused(run("--case-timeout ''"), {"--case-timeout", "above 0"}));
}

TEST_F(BadInput, NegativeOrOverflowingSeedIsRefused) {
  EXPECT_TRUE(Refused(run("--seed -1"), {"--seed", "'-1'", "0 to 18446744073709551615"}));
  EXPECT_TRUE(Refused(run("--seed=-1"), {"--seed", "'-1'"}));
  EXPECT_TRUE(Refused(run("--seed 99999999999999999999"), {"--seed", "larger than"}));
  EXPECT_TRUE(Refused(run("--seed 1.5"), {"--seed", "'1.5'"}));
}

TEST_F(BadInput, LargestSeedIsAccepted) {
  // Past the planner (the refusal is then about --out): 2^64-1 is a valid seed.
  EXPECT_TRUE(Refused(kwb_in(dir_.path(), "run --op rmsnorm_fwd --seed 18446744073709551615 --out /proc/self"),
                      {"--out"}));
}

// ---- repeated flags ------------------------------------------------------------------------

TEST_F(BadInput, RepeatedAxisIsAnErrorNotSilentlyDropped) {
  EXPECT_TRUE(Refused(run("--op rmsnorm_fwd --axis cols=512 --axis cols=4096"),
                      {"--axis", "'cols' is given twice", "cols=512,4096"}));
}

// Repeated --op, --variant and --dtype values count once: 100 distinct cases fit --max-cases 100
// only if none is planned twice.
TEST_F(BadInput, RepeatedOpVariantAndDtypeAreDeduplicated) {
  const std::string sweep = "--axis rows=1:50 --axis cols=64,128 --max-cases 100 --out /proc/self";
  const CommandResult r = kwb_in(dir_.path(), "run --op rmsnorm_fwd --op rmsnorm_fwd,rmsnorm_fwd "
                                              "--variant fused_v2_vec16 -v fused_v2_vec16 --dtype bf16,bf16 -d bf16 " + sweep);
  EXPECT_TRUE(Refused(r, {"--out"}));
  EXPECT_EQ(r.output.find("--max-cases"), std::string::npos) << r.output;
  // The same sweep with a second dtype is 200 cases: the count is real.
  EXPECT_TRUE(Refused(kwb_in(dir_.path(), "run --op rmsnorm_fwd --variant fused_v2_vec16 --dtype bf16,fp16 " + sweep),
                      {"200 cases", "--max-cases"}));
}

// ---- verbs ---------------------------------------------------------------------------------

TEST_F(BadInput, UnknownVerbSuggestsTheClosestAndListsTheCommands) {
  const CommandResult r = kwb_in(dir_.path(), "lst");
  EXPECT_TRUE(Refused(r, {"unknown command 'lst'", "did you mean 'list'", "commands: list, counters, run, tune, profile, ceilings"}));
  EXPECT_TRUE(Refused(kwb_in(dir_.path(), "benchmark"), {"unknown command 'benchmark'", "commands: list, counters, run, tune, profile, ceilings"}));
}

TEST_F(BadInput, NoVerbSaysWhichCommandsExist) {
  EXPECT_TRUE(Refused(kwb_in(dir_.path(), ""), {"commands: list, counters, run, tune, profile, ceilings"}));
}

TEST_F(BadInput, ListOfAnUnknownOpIsAnErrorWithASuggestion) {
  const CommandResult r = kwb_in(dir_.path(), "list --op rmsnrom_fwd");
  EXPECT_TRUE(Refused(r, {"--op", "unknown op 'rmsnrom_fwd'", "did you mean 'rmsnorm_fwd'"}));
}

TEST_F(BadInput, ListOfARepeatedOpShowsItOnce) {
  const CommandResult r = kwb_in(dir_.path(), "list --op rmsnorm_fwd --op rmsnorm_fwd");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const auto first = r.output.find("rmsnorm_fwd  ");
  ASSERT_NE(first, std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("rmsnorm_fwd  ", first + 1), std::string::npos) << r.output;
}

TEST_F(BadInput, HelpDoesNotShowTheInternalWorkerVerb) {
  const CommandResult r = kwb_in(dir_.path(), "--help");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ceilings"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("__worker"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kwb
