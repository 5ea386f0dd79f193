// `kwb run --suite` through the real binary: a malformed suite exits 2 with file:line:column and
// key before any worker starts; --list-cases prints the suite's plan without a GPU; flags that
// conflict with a suite are refused, filters narrow it.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "harness/plan/suite_plan.hpp"
#include "tests/support/command.hpp"
#include "tests/support/mentions.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

using test::CommandResult;
using test::Mentions;
using test::shell_quote;

const std::string kSmoke = std::string(KWB_SOURCE_DIR) + "/suites/smoke.yaml";

class SuiteCli : public ::testing::Test {
 protected:
  CommandResult kwb(const std::string& args) {
    return test::run_command("cd " + shell_quote(dir_.path().string()) + " && " + shell_quote(KWB_CLI_PATH) + " " + args);
  }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  // stdout alone (the plan), one case identity a line.
  std::vector<std::string> plan_lines(const std::string& args) {
    const CommandResult r = test::run_command("(cd " + shell_quote(dir_.path().string()) + " && " +
                                              shell_quote(KWB_CLI_PATH) + " " + args + " 2>/dev/null)");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::vector<std::string> lines;
    std::istringstream in(r.output);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
  test::TempDir dir_;
};

::testing::AssertionResult RefusedBeforeAnyWork(const CommandResult& r) {
  if (r.exit_code != 2) return ::testing::AssertionFailure() << "exit " << r.exit_code << ", not 2:\n" << r.output;
  if (r.output.find("no usable CUDA GPU") != std::string::npos)
    return ::testing::AssertionFailure() << "the worker was started:\n" << r.output;
  return ::testing::AssertionSuccess();
}

TEST_F(SuiteCli, MalformedSuiteExits2NamingFileLineColumnAndKey) {
  const std::string path = write("bad.yaml", "name: bad\nentries:\n  - ops: rmsnorm_fwd\n    dtypes: [bf16, bfl6]\n");
  const CommandResult r = kwb("run --suite " + shell_quote(path) + " --out out");
  EXPECT_TRUE(RefusedBeforeAnyWork(r));
  EXPECT_TRUE(Mentions(r, "kwb run: " + path + ":4:20: entries[0].dtypes[1]: unknown dtype 'bfl6' (did you mean 'bf16'?)"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out" / "report.json"));
}

TEST_F(SuiteCli, UnknownOpAndYamlSyntaxErrorsExit2) {
  std::string path = write("op.yaml", "name: op\nentries: [{ops: rmsnorm_fdw}]\n");
  CommandResult r = kwb("run --suite " + shell_quote(path));
  EXPECT_TRUE(RefusedBeforeAnyWork(r));
  EXPECT_TRUE(Mentions(r, path + ":2:17: entries[0].ops: unknown op 'rmsnorm_fdw' (did you mean 'rmsnorm_fwd'?)"));

  path = write("syntax.yaml", "name: s\nentries:\n  - ops: [rmsnorm_fwd\n");
  r = kwb("run --suite " + shell_quote(path));
  EXPECT_TRUE(RefusedBeforeAnyWork(r));
  EXPECT_TRUE(Mentions(r, "YAML syntax error"));
  EXPECT_TRUE(Mentions(r, path + ":"));

  r = kwb("run --suite no-such-suite.yaml");
  EXPECT_TRUE(RefusedBeforeAnyWork(r));
  EXPECT_TRUE(Mentions(r, "no-such-suite.yaml: no such file"));
}

TEST_F(SuiteCli, ListCasesPrintsTheSuitesPlanWithoutAGpu) {
  const auto lines = plan_lines("run --suite " + shell_quote(kSmoke) + " --list-cases");
  const auto expected = plan_suite(load_suite(kSmoke), Registry::instance());
  ASSERT_EQ(lines.size(), expected.size());
  for (std::size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(lines[i], case_identity(expected[i]));
  const CommandResult r = kwb("run --suite " + shell_quote(kSmoke) + " --list-cases");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(Mentions(r, std::to_string(expected.size()) + " cases planned by suite 'smoke'"));
  EXPECT_TRUE(Mentions(r, "nothing run"));
  EXPECT_FALSE(Mentions(r, "no usable CUDA GPU"));
}

TEST_F(SuiteCli, ListCasesWorksWithoutASuite) {
  const auto lines = plan_lines("run --op rmsnorm_fwd --dtype bf16 --axis cols=1024,4096 --axis rows=2048 --list-cases");
  PlanRequest r;
  r.ops = {"rmsnorm_fwd"};
  r.dtypes = {DType::bf16};
  r.axes = {parse_axis_for("cols=1024,4096", Registry::instance()), parse_axis_for("rows=2048", Registry::instance())};
  const auto expected = plan_cases(r, Registry::instance());
  ASSERT_EQ(lines.size(), expected.size());
  for (std::size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(lines[i], case_identity(expected[i]));
}

TEST_F(SuiteCli, FiltersNarrowTheSuiteAndShapeFlagsAreRefused) {
  for (const auto& line : plan_lines("run --suite " + shell_quote(kSmoke) + " --op softmax_fwd,rmsnorm_fwd --list-cases"))
    EXPECT_TRUE(line.starts_with("softmax_fwd:") || line.starts_with("rmsnorm_fwd:")) << line;

  CommandResult r = kwb("run --suite " + shell_quote(kSmoke) + " --dtype fp32 --list-cases");
  EXPECT_TRUE(RefusedBeforeAnyWork(r));
  EXPECT_TRUE(Mentions(r, "leave none of the"));

  r = kwb("run --suite " + shell_quote(kSmoke) + " --axis cols=4096 --list-cases");
  EXPECT_TRUE(RefusedBeforeAnyWork(r));
  EXPECT_TRUE(Mentions(r, "--axis cannot be combined with --suite"));

  r = kwb("run --suite " + shell_quote(kSmoke) + " --shapes edge --list-cases");
  EXPECT_TRUE(RefusedBeforeAnyWork(r));
  EXPECT_TRUE(Mentions(r, "--shapes cannot be combined with --suite"));
}

TEST_F(SuiteCli, ExplicitModeAndPresetWinOverTheSuite) {
  const CommandResult r = kwb("run --suite " + shell_quote(kSmoke) + " --mode hot --preset quick --list-cases");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Mentions(r, "mode hot, preset quick"));
}

}  // namespace
}  // namespace kwb
