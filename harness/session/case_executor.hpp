// What a run session needs from whatever executes its cases, one at a time.
//
// The real executor is the Supervisor (a worker process that owns the GPU); tests inject a fake
// one, so that progress, cancel and record order are proven on machines without a GPU.
#pragma once

#include <optional>
#include <string>

#include "harness/record/record.hpp"
#include "harness/worker/case_runner.hpp"
#include "harness/worker/measure/ceilings_measure.hpp"

namespace kwb {

struct WorkerHello {
  bool has_gpu = false;
  std::string no_gpu_reason;
  int device_count = -1;  // devices the worker saw; -1 when it could not tell
  DeviceInfo device;
  std::string timer;
  std::string timer_note;
};

class CaseExecutor {
 public:
  virtual ~CaseExecutor() = default;

  // Starts the execution side (the first worker) and returns what it found.
  virtual WorkerHello start() = 0;

  // Measures the ceilings; nullopt (with *error) if that failed.
  virtual std::optional<Ceilings> measure_ceilings(std::string* error) = 0;

  // Runs the short copy that re-checks a cached copy ceiling (check_copy_ceiling in the worker);
  // nullopt (with *error) if that failed. An executor that cannot run it says so and returns
  // nullopt: the session then keeps the cached ceilings and says they were not re-checked.
  virtual std::optional<CopyCheck> check_copy_ceiling(std::string* error) {
    if (error) *error = "this executor cannot run the short copy";
    return std::nullopt;
  }

  // Runs one case; never throws for the case's own failure.
  virtual CaseRecord run_case(const CaseRequest& request) = 0;

  // Says which group will run after the one the next run_case starts (its first case), so that
  // its host work can be done while this one is timed. A hint: nothing depends on it being
  // followed. The default ignores it.
  virtual void expect_next_group(const CaseRequest& /*first_case*/) {}

  // Lets go of the device: ends the execution side (a worker, and with it every allocation it
  // holds) so that another process can have the GPU's memory; the next run_case starts afresh.
  // Not a restart (restarts() does not count it). False when this executor cannot (the default).
  virtual bool release_device() { return false; }

  // Thread-safe (also from a signal handler): makes a run_case in flight return soon with a
  // failed record, ending whatever executes it. A later run_case starts afresh.
  virtual void abandon() = 0;

  // How many times the execution side had to be restarted (a worker lost to a fault).
  virtual int restarts() const = 0;
};

}  // namespace kwb
