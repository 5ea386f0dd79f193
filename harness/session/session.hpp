// A run session as a library call: a plan goes in; records (as each case finishes), progress,
// cancel and the final report come out. `kwb run` is one caller; the desktop app (on a worker
// thread while its UI polls), suites and shards are the others.
//
// Threads: run() blocks the thread that calls it (or start() runs it on a thread of its own and
// wait() joins it). progress(), take_records(), wait_record() and cancel() may be called from any
// other thread while it runs; cancel(CancelMode::finish_current) is also safe from a signal
// handler. Callbacks are called on the session's thread (with several GPUs, on the lanes'
// threads), between cases.
//
// Order of a run: the options are checked and the output folder probed (bad input: nothing has
// started), the executor starts (a worker and its GPU), the plan is checked against the device
// (index in range, memory), the ceilings are chosen, then the cases run one at a time, each
// record derived, journaled (when there is an output folder) and delivered the moment it
// arrives. The report is written at the end (atomically), also after a cancel, then marked
// incomplete.
//
// Several GPUs (options.devices, `kwb run --devices`): one executor (worker) per GPU, each on a
// lane thread of its own that takes the next group of cases not yet taken (the cases that share
// their inputs and oracle, largest first), so a GPU that finishes early takes more: the groups
// differ in length by orders of magnitude, and a fixed split would leave one GPU idle. The GPUs must be of one kind: the first one's ceilings are the
// run's. Records are journaled and delivered as they finish (no longer in plan order; their
// `device` says which GPU measured them); the report holds them in plan order.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/plan/ceilings_choice.hpp"
#include "harness/session/case_executor.hpp"
#include "harness/record/journal.hpp"
#include "harness/record/report.hpp"

namespace kwb {

enum class CancelMode {
  finish_current,   // the case in flight finishes and is recorded; no further case starts
  abandon_current,  // the case in flight is ended now (its worker killed) and recorded as failed
};

struct SessionOptions {
  std::string worker_exe;           // the kwb binary (the real executor runs `kwb __worker`)
  int device = 0;
  // Several GPUs, one worker each (`--devices 0,1`); empty: `device` alone. `all_devices`: every
  // GPU the first worker (on `device`, normally 0) can see.
  std::vector<int> devices;
  bool all_devices = false;
  std::string timer = "auto";       // auto | cupti | events
  double case_timeout_s = 120;      // watchdog per case
  // journal.jsonl, report.json, report.csv and worker.log go here; none: nothing is written
  // (the worker log goes to a temp file).
  std::optional<std::filesystem::path> out;
  CeilingsChoice ceilings = CeilingsChoice::cached_or_measured;
  std::string command_line;                     // for the report
  std::map<std::string, std::string> settings;  // added to the report's settings as they are
  bool queue_records = false;                   // keep records for take_records()/wait_record()
  std::optional<SuiteInfo> suite;               // the suite the plan came from, for the report
  // The plan flags, written into the journal's header so that `kwb run --resume` can re-plan.
  nlohmann::ordered_json plan_flags = nlohmann::ordered_json::object();
  // Resuming (`kwb run --resume`): the journal's header and the cases it recorded, by identity.
  // The journal is appended to (not started afresh), the run info (ceilings, settings) is the
  // journal's, a different GPU is refused, and the recorded cases are not run again: the report
  // holds them and the new ones, in plan order.
  struct Resume {
    JournalHeader header;
    std::map<std::string, CaseRecord> recorded;
  };
  std::optional<Resume> resume;
  std::optional<ShardInfo> shard;               // the plan's slice these cases are (--shard)
  // GPUs the plan was made for: (what asks, device name), e.g. a tuning file's; another GPU is
  // refused once the worker names it (a configuration tuned on one GPU is no answer for another).
  std::vector<std::pair<std::string, std::string>> required_devices;
  // Variables set in every worker's environment (the oracle cache's folder and bound, as
  // harness/worker/oracle_cache/oracle_cache_settings.hpp gives them); the rest is inherited.
  std::vector<std::pair<std::string, std::string>> worker_environment;
};

enum class SessionState { not_started, starting, measuring_ceilings, running, finished };

struct SessionProgress {
  SessionState state = SessionState::not_started;
  std::size_t done = 0;   // cases finished (whatever their disposition)
  std::size_t total = 0;  // cases planned (resuming: those still to measure)
  std::size_t failed = 0;
  double elapsed_s = 0;   // since run() began
  // (total - done) x the mean wall time of the finished cases; absent before the first one.
  std::optional<double> eta_s;
  // The cases in flight ("op:variant:dtype:shape", joined by ", " when several GPUs run cases),
  // empty between cases.
  std::string current;
  bool cancel_requested = false;
};

enum class SessionOutcome {
  completed,  // every case ran (some may have failed: see the records)
  cancelled,  // cancel() stopped it; the report holds the finished cases, marked incomplete
  no_gpu,     // the executor found no usable GPU; nothing ran
  bad_input,  // options, output folder or plan refused (device index, memory); nothing ran
};

struct SessionResult {
  SessionOutcome outcome = SessionOutcome::bad_input;
  std::string message;  // why, for no_gpu and bad_input
  Report report;        // complete or partial; empty for no_gpu and bad_input
  std::vector<std::string> write_errors;  // journal or report writes that failed (the run went on)
  double reports_s = 0;  // writing report.json and report.csv (not in them: they were being written)
  bool any_case_failed() const;
};

struct SessionCallbacks {
  // A case handed to its GPU's worker: progress.current names it (and, on several GPUs, the
  // others in flight), so a display can say what runs now rather than what finished last.
  std::function<void(const CaseRequest&, const SessionProgress&)> on_started;
  // Each record, derived (metrics, repro, role), right after it is journaled: in plan order on
  // one GPU, in the order they finish on several. Never called concurrently with each other or
  // with on_started.
  std::function<void(const CaseRecord&, const SessionProgress&)> on_record;
  // Notes for people: the device and plan line, the timer note, ceilings being measured. On
  // several GPUs a lane's note may come while another lane delivers a record.
  std::function<void(const std::string&)> on_note;
};

// Makes the executor of one GPU (its CUDA index): tests inject fakes; the default makes a
// Supervisor whose worker runs on that GPU.
using ExecutorFactory = std::function<std::unique_ptr<CaseExecutor>(int device)>;

class Session {
 public:
  // `executor` null: a Supervisor (worker processes) built from the options. The executors of
  // further GPUs (options.devices) come from the default factory.
  Session(std::vector<CaseRequest> cases, SessionOptions options,
          std::unique_ptr<CaseExecutor> executor = nullptr, SessionCallbacks callbacks = {});
  // Every GPU's executor from `factory` (null: the default).
  Session(std::vector<CaseRequest> cases, SessionOptions options, ExecutorFactory factory,
          SessionCallbacks callbacks = {});
  ~Session();  // abandons and joins a run started with start()
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Runs the whole session on this thread. Call once.
  SessionResult run();

  // run() on a thread of the session's own; wait() joins it and returns its result.
  void start();
  SessionResult wait();

  void cancel(CancelMode mode);
  SessionProgress progress() const;

  // Records delivered so far and not yet taken (only with options.queue_records).
  std::vector<CaseRecord> take_records();
  // The next record, waiting up to `timeout`; nullopt on timeout or once the session finished
  // and every record was taken.
  std::optional<CaseRecord> wait_record(std::chrono::milliseconds timeout);

 private:
  // A lane: one GPU's executor and the case it has in flight.
  struct Lane {
    int device = 0;
    std::unique_ptr<CaseExecutor> executor;
    WorkerHello hello;
  };
  // At most this many GPUs in one run (cancel() walks a fixed array: it must not lock).
  static constexpr std::size_t kMaxLanes = 64;

  bool several_gpus() const;
  void add_lane(int device, std::unique_ptr<CaseExecutor> executor);
  void set_state(SessionState state);
  void note(const std::string& text) const;  // to callbacks_.on_note, if any

  // run()'s phases, in order. 1-2 (input, executors, plan against the device): session.cpp.
  std::optional<std::string> check_options() const;
  // After a refusal that followed the workers' start (no GPU, a plan the device cannot run): the
  // worker logs they left empty, and the output folder when this run made it and it is empty.
  void discard_empty_outputs(bool out_existed) const;
  std::optional<SessionResult> start_lanes();
  std::optional<SessionResult> start_more_lanes(const WorkerHello& first);
  std::optional<std::string> check_plan_on_device(const WorkerHello& hello) const;
  std::optional<std::string> check_counters(const WorkerHello& hello);
  // 3. The run's description (run info, ceilings, settings) and the plan line: session_report.cpp.
  void describe_run(Report& report, const WorkerHello& hello);
  std::optional<Ceilings> measured_ceilings(const DeviceInfo& device);
  void describe_settings(Report& report, const WorkerHello& hello) const;
  void announce_plan(const WorkerHello& hello) const;
  // 4. The cases, over the lanes: session_lanes.cpp (the journal: session_report.cpp).
  void run_cases(Report& report, SessionResult& result);
  std::unique_ptr<Journal> open_journal(const Report& report, SessionResult& result) const;
  // The plan positions in `pending` cut into runs of cases that share their inputs (op, dtype,
  // shape, seed: the worker makes the inputs and the oracle once per run of them), so that a
  // group is never split between GPUs; with `largest_first`, the groups that move the most bytes
  // come first.
  std::vector<std::vector<std::size_t>> input_groups(const std::vector<std::size_t>& pending,
                                                     bool largest_first) const;
  // One lane's loop: take the next group not yet taken and run its cases, until none is left or
  // a cancel.
  void run_lane(std::size_t lane, const std::vector<std::vector<std::size_t>>& groups,
                std::atomic<std::size_t>& next, std::vector<std::optional<CaseRecord>>& slots,
                std::unique_ptr<Journal>& journal, SessionResult& result, const Ceilings& ceilings);
  // Runs plan position `i` on `lane`, derives, journals and delivers its record.
  void run_one(std::size_t lane, std::size_t i, std::vector<std::optional<CaseRecord>>& slots,
               std::unique_ptr<Journal>& journal, SessionResult& result, const Ceilings& ceilings);
  // 5. The reports, at the end: session_report.cpp.
  SessionResult finish(Report& report, SessionResult& result);

  std::vector<CaseRequest> cases_;
  SessionOptions options_;
  ExecutorFactory factory_;
  SessionCallbacks callbacks_;
  // What the re-check of cached ceilings found (recheck_cached_ceilings' line), for the report's
  // settings; empty when no cache was re-checked.
  std::string ceilings_check_;
  // The counters every case collects, as the report's settings say them ("memory, tensor: 22
  // metrics, 5 replay passes per case on GH100"); empty without counters. Each distinct reason a
  // record gives for counters it could not read is noted once (counters_refused_, under
  // counters_mutex_): a refusal of the whole run once, a case's own trouble once per kind.
  std::string counters_plan_;
  std::mutex counters_mutex_;
  std::set<std::string> counters_refused_;
  std::vector<Lane> lanes_;  // [0] made by the constructor; the others by run(), before any case
  std::array<std::atomic<CaseExecutor*>, kMaxLanes> executors_{};  // lanes_' executors, for cancel()

  std::atomic<int> cancel_{0};  // 0 none, else 1 + CancelMode
  std::chrono::steady_clock::time_point started_at_;
  double case_seconds_ = 0;     // wall time of the finished cases, for the ETA
  SessionProgress progress_;
  std::vector<std::string> in_flight_;  // per lane, the case it runs ("" when none)
  std::mutex deliver_mutex_;    // journal, report slots and callbacks, one record at a time
  mutable std::mutex mutex_;    // progress_, in_flight_, case_seconds_, queue_
  std::condition_variable record_ready_;
  std::vector<CaseRecord> queue_;
  std::thread thread_;
  std::optional<SessionResult> async_result_;
};

std::string_view to_string(SessionOutcome outcome);

}  // namespace kwb
