// Supervisor::release_device with a scripted worker: the worker is asked to exit (not killed)
// and has ended when the call returns, so its GPU memory is free for another process; the next
// case starts a fresh worker, which is not counted as a restart after a fault. And the watchdog
// with scripted workers: it waits --case-timeout for each line of a case, so a worker that says
// "prepared" after a long oracle gets the time again for its launches.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "harness/record/record_json.hpp"
#include "harness/session/supervisor.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

std::string shell_single_quoted(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SupervisorRelease, TheWorkerIsAskedToExitAndTheNextCaseStartsAFreshOneWithoutARestart) {
  const test::TempDir dir;
  // 1. A worker that says hello, answers each case with a passed record, and on "exit" writes
  //    that it was asked, then ends. Each start is counted in a file.
  DeviceInfo device;
  device.name = "Scripted GPU";
  device.global_mem_bytes = std::int64_t(80) << 30;
  const std::string hello = dump_json(nlohmann::ordered_json{
      {"event", "hello"}, {"device", to_json(device)}, {"timer", "cupti"}, {"timer_note", ""}, {"device_count", 1}});
  CaseRequest request;
  request.op = "rmsnorm_fwd";
  request.variant = "fused_v2_vec16";
  CaseRecord answer = record_for(request);
  answer.disposition = Disposition::passed;
  const std::string record = dump_json(nlohmann::ordered_json{{"event", "record"}, {"record", to_json(answer)}});
  const auto starts = dir.path() / "starts", exits = dir.path() / "exits";
  const auto script = dir.path() / "worker.sh";
  {
    std::ofstream out(script);
    out << "#!/bin/sh\necho start >> " << shell_single_quoted(starts.string()) << "\n"
        << "printf '%s\\n' " << shell_single_quoted(hello) << " >&3\n"
        << "while read line; do\n"
        << "  case \"$line\" in\n"
        << "    *'\"exit\"'*) echo asked >> " << shell_single_quoted(exits.string()) << "; exit 0 ;;\n"
        << "    *) printf '%s\\n' " << shell_single_quoted(record) << " >&3 ;;\n"
        << "  esac\n"
        << "done\n";
  }
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  Supervisor supervisor(SupervisorOptions{.worker_exe = script.string(), .case_timeout_s = 20,
                                          .worker_log = dir.path() / "worker.log"});
  // 2. Start, a case, release, a case.
  ASSERT_TRUE(supervisor.start().has_gpu);
  EXPECT_EQ(supervisor.run_case(request).disposition, Disposition::passed);
  EXPECT_TRUE(supervisor.release_device());
  // 3. The worker was asked to exit and had ended by then; the next case runs in a fresh one.
  EXPECT_EQ(read_text(exits), "asked\n") << "ended by the exit command, not killed before it";
  EXPECT_EQ(read_text(starts), "start\n");
  EXPECT_EQ(supervisor.run_case(request).disposition, Disposition::passed);
  EXPECT_EQ(read_text(starts), "start\nstart\n");
  EXPECT_EQ(supervisor.restarts(), 0) << "a release is no restart after a fault";
  EXPECT_TRUE(supervisor.release_device());
  EXPECT_TRUE(supervisor.release_device()) << "nothing to release: still fine";
}

// A worker that answers each case after `before` seconds with "started", then (if `prepared`) a
// "prepared" line, then after `after` more seconds a passed record.
std::filesystem::path slow_worker(const std::filesystem::path& dir, const CaseRequest& request, bool prepared,
                                  double before, double after) {
  DeviceInfo device;
  device.name = "Scripted GPU";
  device.global_mem_bytes = std::int64_t(80) << 30;
  const std::string hello = dump_json(nlohmann::ordered_json{
      {"event", "hello"}, {"device", to_json(device)}, {"timer", "cupti"}, {"timer_note", ""}, {"device_count", 1}});
  CaseRecord answer = record_for(request);
  answer.disposition = Disposition::passed;
  const std::string record = dump_json(nlohmann::ordered_json{{"event", "record"}, {"record", to_json(answer)}});
  const auto script = dir / (prepared ? "prepared.sh" : "silent.sh");
  std::ofstream out(script);
  out << "#!/bin/sh\nprintf '%s\\n' " << shell_single_quoted(hello) << " >&3\n"
      << "while read line; do\n"
      << "  case \"$line\" in *'\"exit\"'*) exit 0 ;; esac\n"
      << "  printf '%s\\n' '{\"event\":\"started\",\"index\":0}' >&3\n"
      << "  sleep " << before << "\n"
      << (prepared ? "  printf '%s\\n' '{\"event\":\"prepared\",\"index\":0}' >&3\n" : "")
      << "  sleep " << after << "\n"
      << "  printf '%s\\n' " << shell_single_quoted(record) << " >&3\n"
      << "done\n";
  out.close();
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  return script;
}

TEST(SupervisorWatchdog, PreparedStartsTheTimeAgainAndSilenceEndsTheWorker) {
  const test::TempDir dir;
  CaseRequest request;
  request.op = "attention_varlen_bwd";
  request.variant = "fused_v2_wgmma_tma_atomic_dq_varlen";
  // 2 s of oracle, then 2 s of launches, against a 3 s watchdog: 4 s in all, each part 1 s inside.
  Supervisor patient(SupervisorOptions{.worker_exe = slow_worker(dir.path(), request, true, 2.0, 2.0).string(),
                                       .case_timeout_s = 3, .worker_log = dir.path() / "prepared.log"});
  ASSERT_TRUE(patient.start().has_gpu);
  const CaseRecord ok = patient.run_case(request);
  EXPECT_EQ(ok.disposition, Disposition::passed) << ok.reason;
  // Without the line: the record would come at 7 s, and the watchdog ends the case at 3 s.
  Supervisor strict(SupervisorOptions{.worker_exe = slow_worker(dir.path(), request, false, 2.0, 5.0).string(),
                                      .case_timeout_s = 3, .worker_log = dir.path() / "silent.log"});
  ASSERT_TRUE(strict.start().has_gpu);
  const CaseRecord lost = strict.run_case(request);
  EXPECT_EQ(lost.disposition, Disposition::failed);
  EXPECT_NE(lost.reason.find("watchdog"), std::string::npos) << lost.reason;
}

}  // namespace
}  // namespace kwb
