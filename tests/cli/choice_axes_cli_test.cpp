// `kwb` with choice axes and tunables, run as a user would: `list` shows them (test-only ops only
// when asked), and a bad choice or tunable value exits 2 before any GPU work.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/command.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/mentions.hpp"

namespace kwb {
namespace choice_axes_cli_test {
namespace {

using test::Mentions;

using test::CommandResult;

CommandResult run_kwb(const std::string& args) {
  return test::run_command(test::shell_quote(KWB_CLI_PATH) + " " + args);
}

TEST(ListChoices, TestOnlyOpIsHiddenUntilAskedForThenShowsChoicesAndTunables) {
  const CommandResult plain = run_kwb("list");
  EXPECT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_FALSE(Mentions(plain, "test_seq_sum"));
  const CommandResult listed = run_kwb("list --include-test-variants");
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_TRUE(Mentions(listed, "test_seq_sum"));
  const CommandResult all = run_kwb("list --details --include-test-variants");
  EXPECT_EQ(all.exit_code, 0) << all.output;
  EXPECT_TRUE(Mentions(all, "one of bshd,bhsd"));
  EXPECT_TRUE(Mentions(all, "one of 0,1"));
  EXPECT_TRUE(Mentions(all, "tunable block = 128,256,512"));
}

class ChoiceBadInput : public ::testing::Test {
 protected:
  CommandResult run(const std::string& args) {
    return run_kwb("run --op test_seq_sum --include-test-variants " + args + " --out " +
                   test::shell_quote((dir_.path() / "out").string()));
  }
  test::TempDir dir_;
};

TEST_F(ChoiceBadInput, UnknownChoiceExitsTwoWithTheValidNames) {
  const CommandResult r = run("--axis layout=bhsq");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "unknown choice 'bhsq'"));
  EXPECT_TRUE(Mentions(r, "did you mean 'bhsd'"));
  EXPECT_TRUE(Mentions(r, "bshd, bhsd"));
}

TEST_F(ChoiceBadInput, RangeOnAChoiceAxisExitsTwoSayingItTakesNames) {
  const CommandResult r = run("--axis causal=0:1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "choice axis"));
  EXPECT_TRUE(Mentions(r, "e.g. causal=0,1"));
}

TEST_F(ChoiceBadInput, UndeclaredTunableValueExitsTwoWithTheDeclaredOnes) {
  const CommandResult r = run("--axis block=96");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "128,256,512"));
}

TEST_F(ChoiceBadInput, TestOnlyOpWithoutTheFlagExitsTwo) {
  const CommandResult r = run_kwb("run --op test_seq_sum --out " +
                                  test::shell_quote((dir_.path() / "out").string()));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "--include-test-variants"));
}

}  // namespace
}  // namespace choice_axes_cli_test
}  // namespace kwb
