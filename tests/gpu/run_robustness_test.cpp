// `kwb run` keeps what it measured when interrupted, and refuses shapes that cannot fit in the
// GPU's memory before measuring anything.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "harness/record/journal_reader.hpp"
#include "harness/record/json_report.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace kwb {
namespace {

// Starts a sweep of many cases in its own process group, sends `sig` once a few cases have
// finished (to the whole group when `to_group`, as `timeout` and a job's limit do: the worker
// gets it too), and checks what is left: exit 130, a report marked incomplete that holds every
// journaled case, none of them failed (the case in flight finishes; a worker killed by the
// signal would turn it into a crash).
void expect_stop_keeps_finished_cases(int sig, bool to_group) {
  const test::TempDir dir;
  const auto out = dir.path();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setpgid(0, 0);
    const std::string dir = out.string();
    execl(KWB_CLI_PATH, KWB_CLI_PATH, "run", "--op", "rmsnorm_fwd", "--dtype", "bf16", "--axis",
          "rows=1024:65536:x2", "--axis", "cols=512,4096", "--preset", "quick",
          "--datasheet-ceilings", "--out", dir.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);  // either side may get there first
  const auto journal = out / "journal.jsonl";
  for (int i = 0; i < 600; ++i) {  // up to 60 s for three cases to land in the journal
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (std::filesystem::exists(journal) && read_journal(journal).size() >= 3) break;
  }
  kill(to_group ? -pid : pid, sig);
  int status = 0;
  waitpid(pid, &status, 0);

  ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 130);
  const Report report = read_report_json(out / "report.json");
  EXPECT_FALSE(report.run.complete);
  EXPECT_GE(report.cases.size(), 3u);
  EXPECT_LT(report.cases.size(), 42u) << "the sweep should have stopped early";
  EXPECT_EQ(read_journal(journal).size(), report.cases.size());
  for (const auto& r : report.cases) EXPECT_EQ(r.disposition, Disposition::passed) << r.reason;
}

TEST(RunRobustness, InterruptKeepsFinishedCasesInJournalAndReport) {
  KWB_REQUIRE_GPU();
  expect_stop_keeps_finished_cases(SIGINT, false);
}

TEST(RunRobustness, TerminateOfTheProcessGroupKeepsFinishedCasesAsInterruptDoes) {
  KWB_REQUIRE_GPU();
  expect_stop_keeps_finished_cases(SIGTERM, true);
}

TEST(RunRobustness, ShapeTooLargeForTheGpuIsRefusedBeforeMeasuring) {
  KWB_REQUIRE_GPU();
  const test::TempDir dir;
  const auto out = dir.path();
  const auto result = test::run_command(std::string(KWB_CLI_PATH) +
      " run --op rmsnorm_fwd --variant fused_v2_vec16 --dtype fp32 --axis rows=1m --axis cols=1m"
      " --datasheet-ceilings --out " + out.string());
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("GiB"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("rows=1048576,cols=1048576"), std::string::npos) << result.output;
  EXPECT_FALSE(std::filesystem::exists(out / "report.json"));
}

}  // namespace
}  // namespace kwb
