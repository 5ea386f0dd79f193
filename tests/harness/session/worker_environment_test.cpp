// A worker's environment: the parent's, with the changes its options ask for (a confirm run gives
// each build's worker its own KWB_TEST_SLOWDOWN, or none).
#include <gtest/gtest.h>

#include <cstdlib>

#include "harness/session/worker_process.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

// What a child started with `changes` says on the protocol descriptor about three variables.
std::string child_sees(const EnvironmentChanges& changes, const std::filesystem::path& log) {
  WorkerProcess child({"/bin/sh", "-c", "echo \"set=${KWB_ENV_SET-none} kept=${KWB_ENV_KEPT-none} "
                                        "gone=${KWB_ENV_GONE-none}\" >&3"},
                      log, changes);
  std::string line;
  EXPECT_EQ(child.read_line(10, line), WorkerProcess::Status::line);
  return line;
}

TEST(WorkerEnvironment, SetsAndRemovesWhatItIsToldAndInheritsTheRest) {
  const test::TempDir dir;
  ::setenv("KWB_ENV_KEPT", "parent", 1);
  ::setenv("KWB_ENV_GONE", "parent", 1);
  ::setenv("KWB_ENV_SET", "parent", 1);
  EXPECT_EQ(child_sees({}, dir.path() / "log"), "set=parent kept=parent gone=parent") << "no changes: all inherited";
  EXPECT_EQ(child_sees({{"KWB_ENV_SET", "child"}, {"KWB_ENV_GONE", std::nullopt}}, dir.path() / "log"),
            "set=child kept=parent gone=none");
  EXPECT_STREQ(std::getenv("KWB_ENV_SET"), "parent") << "the parent's own environment is untouched";
  ::unsetenv("KWB_ENV_KEPT");
  ::unsetenv("KWB_ENV_GONE");
  ::unsetenv("KWB_ENV_SET");
}

}  // namespace
}  // namespace kwb
