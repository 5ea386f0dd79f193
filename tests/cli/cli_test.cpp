// The real `kwb` binary, run as a user would: exit codes and the messages that tell the user what
// to fix. Input errors must be reported (exit 2) before any GPU work, so these run anywhere.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <random>
#include <cctype>
#include <regex>
#include <sstream>
#include <string>

#include "harness/record/version.hpp"
#include "harness/worker/measure/device_info.hpp"
#include "tests/support/command.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/mentions.hpp"

namespace kwb {
namespace {

using test::Mentions;

using CliResult = test::CommandResult;
using test::shell_quote;
using test::TempDir;

// Runs `kwb <args>` (args already shell-quoted where needed) and captures everything it prints.
CliResult run_kwb(const std::string& args) {
  return test::run_command(test::shell_quote(KWB_CLI_PATH) + " " + args);
}


// Bad-input runs get their own --out, so a regression that got past planning would not litter
// the working directory.
class CliBadInput : public ::testing::Test {
 protected:
  CliResult run(const std::string& args) {
    return run_kwb("run " + args + " --out " + shell_quote((dir_.path() / "out").string()));
  }
  TempDir dir_;
};

// ---- bad input: exit 2 and a message that says what to write instead --------------------

TEST_F(CliBadInput, UnknownOpSuggestsTheClosest) {
  const CliResult r = run("--op rmsnrom_fwd");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "unknown op 'rmsnrom_fwd'"));
  EXPECT_TRUE(Mentions(r, "did you mean 'rmsnorm_fwd'"));
}

TEST_F(CliBadInput, MalformedRangeShowsAnExample) {
  const CliResult r = run("--axis cols=1024:x2");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "cols=1024:x2"));
  EXPECT_TRUE(Mentions(r, "e.g. cols=1024:16384:x2"));
}

TEST_F(CliBadInput, UnknownAxisSuggestsTheClosest) {
  const CliResult r = run("--op rmsnorm_fwd --axis colz=4096");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "unknown axis 'colz'"));
  EXPECT_TRUE(Mentions(r, "did you mean 'cols'"));
}

TEST_F(CliBadInput, UnknownDtypeListsTheKnownOnes) {
  const CliResult r = run("--dtype fp8");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "'fp8'"));
  EXPECT_TRUE(Mentions(r, "fp32, fp16 or bf16"));
}

TEST_F(CliBadInput, UnknownModeListsTheKnownOnes) {
  const CliResult r = run("--mode warm");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "'warm'"));
  EXPECT_TRUE(Mentions(r, "cold"));
  EXPECT_TRUE(Mentions(r, "hot"));
}

TEST_F(CliBadInput, UnknownFlushListsTheKnownOnes) {
  const CliResult r = run("--flush writeback");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "'writeback'"));
  EXPECT_TRUE(Mentions(r, "dirty"));
  EXPECT_TRUE(Mentions(r, "clean"));
}

TEST_F(CliBadInput, CleanFlushInHotModeIsRefused) {
  const CliResult r = run("--mode hot --flush clean");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "--flush clean"));
}

TEST_F(CliBadInput, UnknownLaunchListsTheKnownOnes) {
  const CliResult r = run("--launch graphs");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "--launch: unknown launch 'graphs'"));
  EXPECT_TRUE(Mentions(r, "use stream"));
  EXPECT_TRUE(Mentions(r, "or graph"));
}

TEST(CliLaunch, GraphLaunchesArePlannedAndSaidBesideTheMode) {
  const CliResult r = run_kwb("run --op rmsnorm_fwd --variant baseline_eager_8_launches --dtype bf16 --axis rows=1024 "
                              "--axis cols=4096 --mode hot --launch graph --list-cases");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Mentions(r, "rmsnorm_fwd:baseline_eager_8_launches:bf16:1024x4096"));
  EXPECT_TRUE(Mentions(r, "mode hot, launch graph, preset default"));
  const CliResult stream = run_kwb("run --op rmsnorm_fwd --variant baseline_eager_8_launches --dtype bf16 --axis "
                                   "rows=1024 --axis cols=4096 --list-cases");
  EXPECT_TRUE(Mentions(stream, "mode cold, preset default")) << "the default is not spelled out: " << stream.output;
}

TEST_F(CliBadInput, UnknownPresetListsTheKnownOnes) {
  const CliResult r = run("--preset fast");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "'fast'"));
  EXPECT_TRUE(Mentions(r, "quick, default or precise"));
}

TEST_F(CliBadInput, UnknownShapeSetListsTheKnownOnes) {
  const CliResult r = run("--shapes tiny");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "'tiny'"));
  EXPECT_TRUE(Mentions(r, "default (realistic sizes) or edge"));
}

TEST_F(CliBadInput, TestVariantWithoutTheFlagIsRefused) {
  const CliResult r = run("--op rmsnorm_fwd --variant test_fault_illegal_address");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "--include-test-variants"));
}

TEST_F(CliBadInput, UnknownFlagIsAParseError) {
  const CliResult r = run("--no-such-flag");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "--no-such-flag"));
}

TEST_F(CliBadInput, BadInputCreatesNoOutputFolder) {
  const CliResult r = run("--op rmsnrom_fwd");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "out"));
}

TEST(Cli, NoVerbIsAParseError) {
  const CliResult r = run_kwb("");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

// ---- list and --version -----------------------------------------------------------------

// Without --op: one line per op, aligned, within 120 columns, and how to see more.
TEST(CliList, ListsOneLinePerOpThatFitsATerminal) {
  const CliResult r = run_kwb("list");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::istringstream lines(r.output);
  std::string line;
  int op_lines = 0;
  std::size_t variants_column = std::string::npos;
  while (std::getline(lines, line)) {
    EXPECT_LE(line.size(), 120u) << line;
    if (line.empty() || !std::islower(static_cast<unsigned char>(line[0]))) continue;
    ++op_lines;
    const auto at = line.find(" variants");
    ASSERT_NE(at, std::string::npos) << line;
    if (variants_column == std::string::npos) variants_column = at;
    EXPECT_EQ(at, variants_column) << "columns drift: " << line;
  }
  EXPECT_GE(op_lines, 20) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(rmsnorm_fwd +fp32,fp16,bf16 +\d+ variants +\d+ shapes)")))
      << r.output;
  EXPECT_TRUE(Mentions(r, "kwb list --op OP")) << r.output;
  EXPECT_FALSE(std::regex_search(r.output, std::regex(R"(\btest_\w+)"))) << r.output;
}

TEST(CliList, ListsTheOrdinaryVariantsAndHidesTestOnlyOnes) {
  const CliResult r = run_kwb("list --details");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Mentions(r, "rmsnorm_fwd"));
  EXPECT_TRUE(Mentions(r, "baseline_eager_8_launches"));
  EXPECT_TRUE(Mentions(r, "fused_v1_row_per_block"));
  EXPECT_TRUE(Mentions(r, "fused_v2_vec16"));
  EXPECT_FALSE(std::regex_search(r.output, std::regex(R"(\btest_\w+)"))) << r.output;
  EXPECT_EQ(r.output.find("TEST ONLY"), std::string::npos) << r.output;
}

TEST(CliList, EachVariantSaysItsMathPerDtypeAndTheLibrariesItCalls) {
  const CliResult r = run_kwb("list --op linear_bias_relu");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // Each variant's name line is followed by its description, then its math (per dtype where they
  // differ) and its libraries; default shapes are written out, one per line.
  auto math_line = [&](const std::string& variant) {
    const auto at = r.output.find(" " + variant + "\n");
    if (at == std::string::npos) return std::string("(no " + variant + ")");
    const auto description = r.output.find('\n', at) + 1;
    const auto next = r.output.find('\n', description) + 1;
    return r.output.substr(next, r.output.find('\n', next) - next);
  };
  EXPECT_TRUE(Mentions(r, "    m=2048,n=4096,k=4096")) << r.output;
  EXPECT_NE(math_line("baseline_cublas_then_bias_relu")
                .find("math fp32: fp32; fp16: fp16, fp32 acc; bf16: bf16, fp32 acc; uses cuBLASLt"),
            std::string::npos)
      << r.output;
  EXPECT_NE(math_line("fused_v1_naive_thread_per_output").find("math fp32"), std::string::npos) << r.output;
  EXPECT_EQ(math_line("fused_v1_naive_thread_per_output").find("uses"), std::string::npos) << r.output;
  // The tf32 variant runs fp32 cases only: one label, no per-dtype list.
  EXPECT_NE(math_line("fused_v3_mma_sync_tf32_cp_async").find("math tf32"), std::string::npos) << r.output;
  EXPECT_NE(math_line("vendor_cublaslt_relu_bias_epilogue_tf32").find("math tf32; uses cuBLASLt"), std::string::npos)
      << r.output;
}

TEST(CliList, IncludeTestVariantsShowsThem) {
  const CliResult r = run_kwb("list --details --include-test-variants");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Mentions(r, "fused_v2_vec16"));
  EXPECT_TRUE(Mentions(r, "test_fault_illegal_address"));
  EXPECT_TRUE(Mentions(r, "test_fault_device_assert"));
  EXPECT_TRUE(Mentions(r, "test_hang"));
}

TEST(Cli, VersionPrintsTheToolVersion) {
  const CliResult r = run_kwb("--version");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Mentions(r, kToolVersion));
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(^\d+\.\d+\.\d+)"))) << r.output;
}

TEST(Cli, VersionSaysWhenTheBuildIsACompileCheck) {
  const CliResult r = run_kwb("--version");
  EXPECT_EQ(Mentions(r, "compile-check build"), kCompileCheckBuild) << r.output;
}

// A compile-check build (-DKWB_COMPILE_CHECK=ON, device code at -O1) must never measure: it sees
// no GPU, and says why and how to build one that measures.
TEST(CompileCheckBuild, SeesNoGpuAndSaysHowToBuildOneThatMeasures) {
  if (!kCompileCheckBuild) GTEST_SKIP() << "not a compile-check build: the GPU, if any, is used";
  std::string why;
  EXPECT_EQ(cuda_device_count(&why), 0);
  EXPECT_NE(why.find("-DKWB_COMPILE_CHECK=OFF"), std::string::npos) << why;
  TempDir dir;
  const CliResult r = run_kwb("run --op rmsnorm_fwd --out " + shell_quote((dir.path() / "out").string()));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_TRUE(Mentions(r, "compile-check build")) << r.output;
}

// ---- no GPU -----------------------------------------------------------------------------

TEST(CliNoGpu, RunExitsThreeAndSaysWhatCanStillBeDone) {
  const int count = cuda_device_count(nullptr);
  if (count > 0)
    GTEST_SKIP() << "a GPU is present: " << count << " device(s); the no-GPU path cannot be tested here";
  TempDir dir;
  const CliResult r = run_kwb("run --op rmsnorm_fwd --out " + shell_quote((dir.path() / "out").string()));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_TRUE(Mentions(r, "no usable CUDA GPU"));
  EXPECT_TRUE(Mentions(r, "kwb list"));
  // Nothing left behind: the output folder this run made is gone, an existing one keeps no empty log.
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out")) << "an empty folder and worker.log were left";
  std::filesystem::create_directories(dir.path() / "mine");
  const CliResult again = run_kwb("run --op rmsnorm_fwd --out " + shell_quote((dir.path() / "mine").string()));
  EXPECT_EQ(again.exit_code, 3) << again.output;
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "mine")) << "a folder the user made is kept";
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "mine" / "worker.log"));
}

// "Did you mean" lists the catalogue a user can run, not the ops that exist to test the harness.
TEST(CliMessages, UnknownOpSuggestionsLeaveOutTestOnlyOps) {
  const CliResult r = run_kwb("run --op rmsnorm_fwdd");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "did you mean 'rmsnorm_fwd'?")) << r.output;
  EXPECT_TRUE(Mentions(r, "swiglu_mlp_fwd")) << r.output;
  EXPECT_FALSE(Mentions(r, "test_colsum")) << r.output;
  EXPECT_FALSE(Mentions(r, "example_scale_rows_cols")) << r.output;
}

TEST(CliNoGpu, VerifyPresetAndEdgeShapesAreAcceptedPlans) {
  const int count = cuda_device_count(nullptr);
  if (count > 0)
    GTEST_SKIP() << "a GPU is present: " << count << " device(s); the no-GPU path cannot be tested here";
  TempDir dir;
  const CliResult r = run_kwb("run --op rmsnorm_fwd --preset verify --shapes edge --out " +
                              shell_quote((dir.path() / "out").string()));
  EXPECT_EQ(r.exit_code, 3) << "planned, then stopped for want of a GPU: " << r.output;
}

}  // namespace
}  // namespace kwb
