// The Live run panel's model: a sweep planned from the same strings `kwb run` takes (or a suite
// file) by the same request layer (harness/plan/run_request.hpp), run by a Session on the
// session's own thread, while the UI thread calls poll() once a
// frame to move the finished records into the Workbench as a live report. The report then shows
// in the table, roofline and sweeps like any opened one, growing as cases finish; at the end it
// is replaced by the session's final report (run info, ceilings) read from where the session
// wrote it (--out, default results/live-<time>).
//
// No ImGui here: gui/windows/live_run_window.cpp draws it, tests/gui/live_run_test.cpp drives it
// with the fake executor of the session tests. Nothing in here throws to the caller: bad input
// becomes error() and the run does not start.
#pragma once

#include <cstddef>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gui/model/workbench.hpp"
#include "harness/plan/setting_error.hpp"
#include "harness/session/session.hpp"

namespace kwb::gui {

// What the panel's inputs say, as text, so that a typo becomes a message rather than a crash.
struct LiveRunRequest {
  std::string ops, variants, dtypes;  // comma-separated, as --op / --variant / --dtype
  std::string axes;                   // "rows=1024:8192:x2 cols=4096": --axis values, space-separated
  std::string suite;                  // a suite file: the plan comes from it (axes are then refused)
  std::string preset = "default";     // quick | default | precise | verify (kwb run's default)
  std::string out;                    // the report's folder; empty: results/live-<time>
  std::string worker_exe;             // the kwb binary; empty: default_worker_exe()
  int device = 0;
  bool datasheet_ceilings = false;    // measure no ceilings (quicker start)
};

// Whether live runs can happen here: the CUDA runtime's device count, as `kwb run`'s worker
// sees it (measure/device_info: cudart only, never libcuda). Asked once, then remembered.
struct GpuPresence {
  bool present = false;
  std::string reason;  // why not, for the disabled panel
};
const GpuPresence& gpu_presence();

// The kwb binary next to kwb-gui (build/gui/kwb-gui -> build/kwb), else "kwb" on PATH.
std::string default_worker_exe();

// The panel's name for a setting: the label of its field (the window draws the fields with
// these), or the setting's id for one the panel does not show.
std::string field_label(Setting setting);

// A refusal as the panel says it: a SettingError with the fields' labels ("axes rows: ..."),
// anything else (a suite file's line, a tuning file) as it is.
std::string panel_message(const std::exception& refusal);

// The plan the request describes; throws std::invalid_argument (SettingError, SuiteError), which
// panel_message words. `options` gets the suite's info and ceilings.
std::vector<CaseRequest> plan_live_run(const LiveRunRequest& request, SessionOptions& options);

class LiveRun {
 public:
  LiveRun() = default;
  ~LiveRun();  // cancels (abandoning the case in flight) and joins a run still going
  LiveRun(const LiveRun&) = delete;
  LiveRun& operator=(const LiveRun&) = delete;

  // Plans and starts a run; false with error() set on bad input (nothing started, and the
  // workbench untouched). `factory` null: the real worker processes (GPU); tests pass a fake.
  bool start(const LiveRunRequest& request, Workbench& wb, ExecutorFactory factory = {});

  // Once a frame, on the UI thread: the records finished since the last call join the live
  // report in `wb`; when the session is over, its final report replaces the live one. Returns
  // how many records joined.
  std::size_t poll(Workbench& wb);

  // Asks the session to stop: finish_current lets the case in flight end and be recorded.
  void cancel(CancelMode mode = CancelMode::finish_current);

  bool running() const { return session_ != nullptr && !finished_; }
  bool finished() const { return finished_; }
  SessionProgress progress() const;   // done/total, ETA, the current case
  std::size_t received() const { return received_; }  // records moved into the workbench so far
  const std::string& error() const { return error_; }  // bad input, no GPU, write errors
  std::string status() const;        // one line for the panel
  const std::filesystem::path& out_dir() const { return out_; }
  // The saved report (out_dir()/report.json), once the run finished and it was written.
  const std::optional<std::filesystem::path>& report_path() const { return report_path_; }
  std::optional<SessionOutcome> outcome() const { return outcome_; }

 private:
  int live_index(Workbench& wb);  // the live report's index, made again if it was closed
  void finish(Workbench& wb);

  std::unique_ptr<Session> session_;
  std::future<SessionResult> result_;  // Session::run() on a thread of its own (see live_run.cpp)
  bool finished_ = false;
  std::string error_;
  std::filesystem::path out_;
  std::string name_;  // the live report's name in the workbench
  int report_ = -1;
  std::size_t received_ = 0;
  std::optional<std::filesystem::path> report_path_;
  std::optional<SessionOutcome> outcome_;
  SessionProgress last_progress_;  // kept after the session is gone
};

}  // namespace kwb::gui
