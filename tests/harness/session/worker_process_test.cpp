// The log helpers used in error messages about dead or hung workers.
#include "harness/session/worker_process.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace kwb {
namespace {

TEST(LastLines, EmptyTextGivesEmptyString) {
  EXPECT_EQ(last_lines("", 4), "");
  EXPECT_EQ(last_lines("\n\n", 4), "");
}

TEST(LastLines, KeepsOnlyTheLastLinesWithoutTrailingNewlines) {
  EXPECT_EQ(last_lines("a\nb\nc\nd\n", 2), "c\nd");
  EXPECT_EQ(last_lines("a\nb\nc\nd", 2), "c\nd");
  EXPECT_EQ(last_lines("only\n\n", 3), "only");
  EXPECT_EQ(last_lines("a\nb\n", 5), "a\nb");
  EXPECT_EQ(last_lines("\nx", 1), "x");
}

TEST(TailOfFile, ReadsOnlyWhatCameAfterTheOffset) {
  const auto path = std::filesystem::temp_directory_path() / ("kwb-tail-" + std::to_string(::getpid()));
  { std::ofstream(path) << "first worker\nsecond worker\n"; }
  EXPECT_EQ(tail_of_file(path, 4096, 0), "first worker\nsecond worker\n");
  EXPECT_EQ(tail_of_file(path, 4096, 13), "second worker\n");
  EXPECT_EQ(tail_of_file(path, 4096, 1000), "");
  EXPECT_EQ(tail_of_file(path, 7, 0), "worker\n");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace kwb
