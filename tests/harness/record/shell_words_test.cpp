// Shell quoting and splitting: words with every character a shell treats specially come back
// from the printed line unchanged (seeded random words), and sh's rules for pasted lines.
#include <gtest/gtest.h>

#include <random>

#include "harness/record/shell_words.hpp"

namespace kwb {
namespace {

TEST(ShellWords, SplitsAsShDoesWithoutExpanding) {
  EXPECT_EQ(shell_split("  kwb run --op  rmsnorm_fwd\t--axis 'rows=4096' \"cols=4096\"  "),
            (std::vector<std::string>{"kwb", "run", "--op", "rmsnorm_fwd", "--axis", "rows=4096", "cols=4096"}));
  EXPECT_EQ(shell_split(R"(a\ b 'c"d' "e\"f\\g\$h\x" '')"),
            (std::vector<std::string>{"a b", "c\"d", "e\"f\\g$h\\x", ""}));
  EXPECT_EQ(shell_split("'it'\\''s'"), (std::vector<std::string>{"it's"}));
  EXPECT_TRUE(shell_split("   ").empty());
  EXPECT_THROW(shell_split("kwb 'open"), ShellWordsError);
  EXPECT_THROW(shell_split("kwb \"open"), ShellWordsError);
  EXPECT_THROW(shell_split("kwb \\"), ShellWordsError);
}

TEST(ShellWords, QuotesOnlyWhatAShellWouldReadSomethingInto) {
  EXPECT_EQ(shell_quote("--axis"), "--axis");
  EXPECT_EQ(shell_quote("cols=512,4100"), "cols=512,4100");
  EXPECT_EQ(shell_quote("results/ncu-x.csv"), "results/ncu-x.csv");
  EXPECT_EQ(shell_quote("kwb@a:b/measure/"), "'kwb@a:b/measure/'");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("it's"), R"('it'\''s')");
}

TEST(ShellWords, RandomWordsComeBackFromTheJoinedLineUnchanged) {
  std::mt19937_64 rng(4242);
  const std::string alphabet = "abcXYZ019_-./:=,+%@ \t'\"\\$`!*?[]{}()<>|&;#~";
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<std::string> words(1 + rng() % 6);
    for (auto& w : words) {
      const std::size_t n = rng() % 9;  // empty words too
      for (std::size_t i = 0; i < n; ++i) w += alphabet[rng() % alphabet.size()];
    }
    EXPECT_EQ(shell_split(shell_join(words)), words) << shell_join(words);
  }
}

}  // namespace
}  // namespace kwb
