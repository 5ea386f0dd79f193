// What a session writes about its run: the run info at the start (who, when, where, with which
// ceilings and settings) and the plan line for people, the journal's header, and the reports at
// the end. Resuming, the journal's run info is the run's: its records were derived with its
// ceilings.
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fmt/format.h>

#include "harness/catalogue/flush_kind.hpp"
#include "harness/derive/ceilings.hpp"
#include "harness/derive/derive.hpp"
#include "harness/plan/planner.hpp"
#include "harness/record/csv_report.hpp"
#include "harness/record/journal.hpp"
#include "harness/record/version.hpp"
#include "harness/session/session.hpp"

namespace kwb {
namespace {

std::string now_utc() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

std::string hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

}  // namespace

// 3. The report's run info, before any case runs.
void Session::describe_run(Report& report, const WorkerHello& hello) {
  report.run.tool_version = kToolVersion;
  report.run.git_sha = kGitSha;
  report.run.command_line = options_.command_line;
  report.run.host = hostname();
  report.run.started_at = now_utc();
  report.run.device = hello.device;
  if (lanes_.size() > 1)
    for (const auto& lane : lanes_) report.run.devices.push_back(lane.hello.device);
  report.run.datasheet_ceilings = datasheet_ceilings(hello.device);
  report.run.suite = options_.suite;
  report.run.shard = options_.shard;
  std::optional<Ceilings> measured;
  if (options_.resume) {  // the journal's run info: its records were derived with these ceilings
    const std::string command_line = report.run.command_line;
    report.run = options_.resume->header.run;
    report.run.settings["resumed_by"] = command_line;
    measured = report.run.ceilings;
  } else {
    measured = measured_ceilings(hello.device);
  }
  report.run.ceilings = measured ? *measured : *report.run.datasheet_ceilings;
  if (!options_.resume) describe_settings(report, hello);
}

// 3. The ceilings as options_.ceilings asks: cached per device and driver, measured once (and
// cached), or measured afresh; nullopt when the datasheet's are to be used, by choice or because
// measuring failed.
std::optional<Ceilings> Session::measured_ceilings(const DeviceInfo& device) {
  if (options_.ceilings == CeilingsChoice::datasheet) return std::nullopt;
  std::optional<Ceilings> measured;
  std::optional<Ceilings> stale;  // cached ceilings the short copy found too low
  if (options_.ceilings == CeilingsChoice::cached_or_measured) measured = load_cached_ceilings(device);
  if (measured) {
    // A cached ceiling is re-checked by a short copy before any case is judged against it.
    std::string error;
    const std::optional<CopyCheck> check = lanes_[0].executor->check_copy_ceiling(&error);
    const CeilingsRecheck recheck = recheck_cached_ceilings(
        *measured, check ? std::optional(check->copy_gbps) : std::nullopt, check ? check->method : "", error);
    ceilings_check_ = recheck.text;
    note(recheck.text);
    if (!recheck.remeasure) return measured;
    stale = std::move(measured);
  }
  set_state(SessionState::measuring_ceilings);
  note(options_.ceilings == CeilingsChoice::measure_fresh
           ? "measuring this GPU's ceilings afresh (as `kwb ceilings --refresh`; the cache is updated)..."
           : "measuring this GPU's ceilings (once per device and driver; `kwb ceilings` shows them)...");
  std::string error;
  measured = lanes_[0].executor->measure_ceilings(&error);
  if (!measured) {
    if (stale) {
      note("could not measure ceilings again (" + error + "); using the cached ones");
      ceilings_check_ += "; measuring again failed (" + error + "): the cached ones were used";
      return stale;
    }
    note("could not measure ceilings (" + error + "); using the datasheet");
    return measured;
  }
  try {
    save_cached_ceilings(device, *measured);
  } catch (const std::exception& e) {
    note(std::string("warning: could not cache the ceilings (") + e.what() + "); they are measured again next time");
  }
  return measured;
}

// 3. The report's settings: what the plan's cases share, and the caller's own.
void Session::describe_settings(Report& report, const WorkerHello& hello) const {
  const CaseRequest& first = cases_.front();
  const std::string mode(to_string(first.mode));
  report.run.settings = {{"mode", mode}, {"launch", std::string(to_string(first.launch))},
                         {"preset", first.preset}, {"seed", std::to_string(first.seed)},
                         {"timer", hello.timer}, {"case_timeout_s", fmt::format("{}", options_.case_timeout_s)},
                         {"cases_planned", std::to_string(cases_.size())}};
  if (!hello.timer_note.empty()) report.run.settings["timer_note"] = hello.timer_note;
  if (!ceilings_check_.empty()) report.run.settings["ceilings_check"] = ceilings_check_;
  if (!counters_plan_.empty()) report.run.settings["counters"] = counters_plan_;
  if (first.mode == Mode::cold) {
    report.run.settings["flush"] = std::string(to_string(first.flush));
    report.run.settings["l2_flush"] = describe_flush(first.flush, hello.device.l2_bytes);
  }
  for (const auto& [key, value] : options_.settings) report.run.settings[key] = value;
}

// 3. The plan line for people: how many cases, on which GPU(s), with which timer, mode and preset.
void Session::announce_plan(const WorkerHello& hello) const {
  const CaseRequest& first = cases_.front();
  const std::string mode(to_string(first.mode));
  std::string where = fmt::format("{} ({})", hello.device.name, hello.device.uuid);
  if (lanes_.size() > 1) {
    std::string indices;
    for (const auto& lane : lanes_) {
      if (!indices.empty()) indices += ",";
      indices += std::to_string(lane.device);
    }
    where = fmt::format("{} GPUs {} ({}), one worker each", lanes_.size(), indices, hello.device.name);
  }
  note(fmt::format("{} cases on {}, timer {}, mode {}{}, preset {}{}", progress_.total, where, hello.timer, mode,
                   launch_note(first.launch), first.preset,
                   options_.resume ? fmt::format(" ({} recorded before, resumed)", options_.resume->recorded.size())
                                   : ""));
  if (!counters_plan_.empty()) note("counters: " + counters_plan_);
}

// 4. The journal, when there is an output folder: one per run, started afresh with its header
// (the plan and the run info), or appended to when resuming. Null when it cannot be opened (the
// cases still run; the reports at the end hold them).
std::unique_ptr<Journal> Session::open_journal(const Report& report, SessionResult& result) const {
  std::unique_ptr<Journal> journal;
  if (!options_.out) return journal;
  std::error_code ec;
  if (!options_.resume) std::filesystem::remove(*options_.out / "journal.jsonl", ec);  // one journal per run
  try {
    journal = std::make_unique<Journal>(*options_.out / "journal.jsonl");
    if (!options_.resume) {
      JournalHeader header{options_.plan_flags, {}, report.run};
      for (const auto& c : cases_) header.plan.push_back(case_identity(c));
      journal->write_header(header);
    }
  } catch (const std::exception& e) {
    result.write_errors.push_back(std::string("cannot open the journal: ") + e.what());
  }
  return journal;
}

// 5. The reports, atomically; a cancelled run gets them too, marked incomplete.
SessionResult Session::finish(Report& report, SessionResult& result) {
  derive_speedups(report.cases);
  const bool cancelled = cancel_.load() != 0;
  report.run.complete = !cancelled;
  report.run.finished_at = now_utc();
  int restarts = 0;
  for (const auto& lane : lanes_) restarts += lane.executor->restarts();
  report.run.settings["worker_restarts"] = std::to_string(restarts);
  if (options_.out) {
    const auto writing = std::chrono::steady_clock::now();
    try {
      write_report_json(*options_.out / "report.json", report);
      write_report_csv(*options_.out / "report.csv", report);
    } catch (const std::exception& e) {
      result.write_errors.push_back(std::string("cannot write the reports: ") + e.what());
    }
    result.reports_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - writing).count();
  }
  result.outcome = cancelled ? SessionOutcome::cancelled : SessionOutcome::completed;
  return std::move(result);
}

}  // namespace kwb
