// The parent side of a run: starts workers, hands them cases, and survives their deaths.
//
// A case whose kernel faults comes back as a failed record (the worker catches the CUDA error)
// and the worker exits because its context is lost; a case that hangs or kills the worker
// outright is ended by the watchdog and recorded as failed with what the worker left in its
// log. Either way a fresh worker takes the next case.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/session/case_executor.hpp"
#include "harness/session/worker_process.hpp"

namespace kwb {

struct SupervisorOptions {
  std::string worker_exe;           // the kwb binary (it runs `kwb __worker`)
  int device = 0;
  std::string timer = "auto";       // auto | cupti | events
  double case_timeout_s = 120;      // watchdog per case
  std::filesystem::path worker_log; // worker stdout/stderr
  EnvironmentChanges environment = {};  // for the worker, beyond what it inherits (worker_process.hpp)
  // The cases collect hardware counters: the worker initialises the profiler before it loads any
  // kernel (`__worker --counters`), as counters that patch the kernels' code need.
  bool counters = false;
};

class Supervisor : public CaseExecutor {
 public:
  explicit Supervisor(SupervisorOptions options);
  ~Supervisor() override;
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Starts the first worker and returns what it found.
  WorkerHello start() override;

  // Measures the ceilings in the worker; nullopt (with *error) if that failed.
  std::optional<Ceilings> measure_ceilings(std::string* error) override;
  std::optional<CopyCheck> check_copy_ceiling(std::string* error) override;

  // Runs one case; never throws for the case's own failure.
  CaseRecord run_case(const CaseRequest& request) override;

  // Sent to the worker just before the next case (the "prefetch" command).
  void expect_next_group(const CaseRequest& first_case) override { next_group_ = first_case; }

  // Asks the worker to exit and waits until it has (its context, and so its memory, freed); the
  // next case starts a fresh one.
  bool release_device() override;

  // Wakes a run_case in flight (or ends the next one at once), which kills its worker and returns
  // a failed record that says the case was abandoned. Only writes one byte to a pipe: safe from
  // any thread or a signal handler.
  void abandon() override;

  int restarts() const override { return restarts_; }
  int worker_restarts() const { return restarts_; }

 private:
  WorkerHello spawn();
  CaseRecord run_case_in_worker(const CaseRequest& request);
  CaseRecord lost_case(const CaseRequest& request, const std::string& what);
  bool take_abandon();  // true (once) when abandon() was called since the last case
  SupervisorOptions options_;
  int wake_[2] = {-1, -1};  // abandon() writes, the case's read_line polls
  std::unique_ptr<WorkerProcess> worker_;
  int restarts_ = 0;
  bool released_ = false;  // the worker was ended by release_device(): its successor is no restart
  std::size_t log_offset_ = 0;  // where the current worker's part of the log starts
  std::optional<CaseRequest> next_group_;  // expect_next_group's hint, not yet sent
};

}  // namespace kwb
