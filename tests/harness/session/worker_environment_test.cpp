// A worker's environment: the parent's, with the changes its options ask for (a confirm run gives
// each build's worker its own KWB_TEST_SLOWDOWN, or none), and the variables a session sets for
// every worker (the oracle cache's folder and bound, malloc's huge pages).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/plan/planner.hpp"
#include "harness/session/session.hpp"
#include "harness/session/worker_memory.hpp"
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

// The real Supervisor, made by the session's own factory, starts a scripted worker that writes
// its environment down and answers as a worker on a machine without a GPU does.
TEST(WorkerEnvironment, TheSessionsVariablesReachItsWorkers) {
  test::TempDir dir;
  const auto env_file = dir / "worker-env.txt";
  const auto script = dir / "worker.sh";
  {
    std::ofstream out(script);
    out << "#!/bin/sh\nenv > '" << env_file.string() << "'\n"
        << "printf '%s\\n' '{\"event\":\"no_gpu\",\"reason\":\"scripted\"}' >&3\n";
  }
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  PlanRequest req;
  req.ops = {"rmsnorm_fwd"};
  req.variants = {"fused_v2_vec16"};
  req.dtypes = {DType::bf16};
  req.axes = {parse_axis_assignment("rows=1024"), parse_axis_assignment("cols=1024")};
  SessionOptions o;
  o.worker_exe = script.string();
  o.ceilings = CeilingsChoice::datasheet;
  o.out = dir / "out";
  o.worker_environment = {{"KWB_ORACLE_CACHE", (dir / "oracle cache").string()}, {"KWB_CACHE_MAX_BYTES", "1234567"}};
  Session session(plan_cases(req, Registry::instance()), o);
  const SessionResult result = session.run();
  EXPECT_EQ(result.outcome, SessionOutcome::no_gpu) << result.message;
  std::ifstream in(env_file);
  ASSERT_TRUE(in) << "the scripted worker did not run";
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("KWB_ORACLE_CACHE=" + (dir / "oracle cache").string() + "\n"), std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("KWB_CACHE_MAX_BYTES=1234567\n"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("GLIBC_TUNABLES=" + worker_glibc_tunables(std::getenv("GLIBC_TUNABLES")) + "\n"),
            std::string::npos)
      << "the worker's large allocations are not on huge pages: " << text.str();
}

TEST(WorkerEnvironment, TheWorkersMallocAsksForHugePagesKeepingTheUsersTunables) {
  EXPECT_EQ(worker_glibc_tunables(nullptr), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(worker_glibc_tunables(""), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(worker_glibc_tunables("glibc.malloc.arena_max=2"), "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
  EXPECT_EQ(worker_glibc_tunables("glibc.malloc.hugetlb=0"), "glibc.malloc.hugetlb=0") << "the user's choice stands";
  EXPECT_EQ(worker_glibc_tunables("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2"),
            "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2");
}

}  // namespace
}  // namespace kwb
