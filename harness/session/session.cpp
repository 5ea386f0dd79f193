// The run loop behind `kwb run`, the app's live runs and suites: checks, start-up, ceilings,
// cases, reports.
#include "harness/session/session.hpp"

#include "harness/catalogue/flush_kind.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fmt/format.h>

#include "harness/derive/ceilings.hpp"
#include "harness/derive/derive.hpp"
#include "harness/plan/planner.hpp"
#include "harness/record/version.hpp"
#include "harness/session/resume_plan.hpp"
#include "harness/session/supervisor.hpp"
#include "harness/record/csv_report.hpp"
#include "harness/record/journal.hpp"
#include "harness/record/output_paths.hpp"

namespace kwb {
namespace {

const std::vector<std::string> kOutputFiles = {"journal.jsonl", "report.json", "report.csv", "worker.log"};

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

// One log per GPU when several run: each worker's part of its log is found by offset, which
// needs one writer per file.
std::filesystem::path worker_log_path(const SessionOptions& o, int device, bool several) {
  const std::string name = several ? fmt::format("worker-gpu{}.log", device) : "worker.log";
  if (o.out) return *o.out / name;
  return std::filesystem::temp_directory_path() / fmt::format("kwb-{}-{}", ::getpid(), name);
}

SessionResult refused(SessionOutcome outcome, std::string message) {
  SessionResult r;
  r.outcome = outcome;
  r.message = std::move(message);
  return r;
}

}  // namespace

std::string_view to_string(SessionOutcome o) {
  switch (o) {
    case SessionOutcome::completed: return "completed";
    case SessionOutcome::cancelled: return "cancelled";
    case SessionOutcome::no_gpu: return "no_gpu";
    case SessionOutcome::bad_input: return "bad_input";
  }
  return "?";
}

bool SessionResult::any_case_failed() const {
  for (const auto& r : report.cases)
    if (r.disposition == Disposition::failed) return true;
  return false;
}

Session::Session(std::vector<CaseRequest> cases, SessionOptions options,
                 std::unique_ptr<CaseExecutor> executor, SessionCallbacks callbacks)
    : Session(std::move(cases), std::move(options), ExecutorFactory{}, std::move(callbacks)) {
  if (executor) {  // replaces the first GPU's default executor before anything ran
    lanes_[0].executor = std::move(executor);
    executors_[0].store(lanes_[0].executor.get());
  }
}

Session::Session(std::vector<CaseRequest> cases, SessionOptions options, ExecutorFactory factory,
                 SessionCallbacks callbacks)
    : cases_(std::move(cases)), options_(std::move(options)), factory_(std::move(factory)),
      callbacks_(std::move(callbacks)) {
  progress_.total = cases_.size();
  if (options_.resume) {
    progress_.total = 0;
    for (const auto& c : cases_) progress_.total += !options_.resume->recorded.contains(case_identity(c));
  }
  if (!factory_) {
    factory_ = [this](int device) -> std::unique_ptr<CaseExecutor> {
      return std::make_unique<Supervisor>(SupervisorOptions{options_.worker_exe, device, options_.timer,
                                                            options_.case_timeout_s,
                                                            worker_log_path(options_, device, several_gpus())});
    };
  }
  // The first GPU's executor is made here, not in run(), so that cancel() from another thread
  // always sees it.
  lanes_.reserve(kMaxLanes);
  const int first = options_.devices.empty() ? options_.device : options_.devices.front();
  add_lane(first, factory_(first));
}

bool Session::several_gpus() const { return options_.all_devices || options_.devices.size() > 1; }

void Session::add_lane(int device, std::unique_ptr<CaseExecutor> executor) {
  const std::size_t i = lanes_.size();
  std::lock_guard lock(mutex_);
  lanes_.push_back(Lane{device, std::move(executor), {}});
  executors_[i].store(lanes_[i].executor.get());
  in_flight_.emplace_back();
}

Session::~Session() {
  if (thread_.joinable()) {
    cancel(CancelMode::abandon_current);
    thread_.join();
  }
}

void Session::start() {
  thread_ = std::thread([this] { async_result_ = run(); });
}

SessionResult Session::wait() {
  if (thread_.joinable()) thread_.join();
  return async_result_ ? std::move(*async_result_) : refused(SessionOutcome::bad_input, "the session was not started");
}

void Session::cancel(CancelMode mode) {
  // Only an atomic store and (for abandon) the executor's one-byte write: signal-safe.
  int expected = 0;
  const int wanted = 1 + static_cast<int>(mode);
  if (!cancel_.compare_exchange_strong(expected, wanted) && mode == CancelMode::abandon_current)
    cancel_.store(wanted);  // an abandon overrides an earlier finish_current
  if (mode != CancelMode::abandon_current) return;
  for (const auto& slot : executors_)
    if (CaseExecutor* executor = slot.load()) executor->abandon();
}

SessionProgress Session::progress() const {
  std::lock_guard lock(mutex_);
  SessionProgress p = progress_;
  p.cancel_requested = cancel_.load() != 0;
  if (p.state != SessionState::not_started)
    p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_at_).count();
  std::string current;
  for (const auto& c : in_flight_)
    if (!c.empty()) current += (current.empty() ? "" : ", ") + c;
  p.current = current;
  if (p.done > 0 && p.state != SessionState::finished)  // the lanes share the remaining cases
    p.eta_s = case_seconds_ / static_cast<double>(p.done) * static_cast<double>(p.total - p.done) /
              static_cast<double>(in_flight_.size());
  else if (p.state == SessionState::finished)
    p.eta_s = 0.0;
  return p;
}

std::vector<CaseRecord> Session::take_records() {
  std::lock_guard lock(mutex_);
  return std::exchange(queue_, {});
}

std::optional<CaseRecord> Session::wait_record(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  record_ready_.wait_for(lock, timeout,
                         [&] { return !queue_.empty() || progress_.state == SessionState::finished; });
  if (queue_.empty()) return std::nullopt;
  CaseRecord r = std::move(queue_.front());
  queue_.erase(queue_.begin());
  return r;
}

void Session::set_state(SessionState state) {
  {
    std::lock_guard lock(mutex_);
    progress_.state = state;
  }
  record_ready_.notify_all();
}

std::optional<std::string> Session::check_options() const {
  if (cases_.empty()) return "the plan holds no case";
  if (options_.timer != "auto" && options_.timer != "cupti" && options_.timer != "events")
    return "--timer: unknown timer '" + options_.timer + "'; use auto, cupti or events";
  if (options_.device < 0)
    return fmt::format("--device: {} is not a device index; devices count from 0", options_.device);
  if (!std::isfinite(options_.case_timeout_s) || options_.case_timeout_s <= 0)
    return fmt::format("--case-timeout: {} is not a time limit; give seconds above 0, e.g. 120",
                       options_.case_timeout_s);
  if (options_.devices.size() > kMaxLanes)
    return fmt::format("--devices: {} GPUs given; one run spreads over at most {}", options_.devices.size(), kMaxLanes);
  for (std::size_t i = 0; i < options_.devices.size(); ++i) {
    if (options_.devices[i] < 0)
      return fmt::format("--devices: {} is not a device index; devices count from 0", options_.devices[i]);
    for (std::size_t j = 0; j < i; ++j)
      if (options_.devices[j] == options_.devices[i])
        return fmt::format("--devices: GPU {} is given twice; name each GPU once, e.g. --devices 0,1",
                           options_.devices[i]);
  }
  std::vector<std::string> files = kOutputFiles;
  for (int d : options_.devices) files.push_back(fmt::format("worker-gpu{}.log", d));
  if (options_.out) {
    if (auto problem = check_output_folder(*options_.out, files))
      return "--out: " + *problem + "; pass a writable folder with --out";
  } else if (auto problem = check_output_file(worker_log_path(options_, lanes_[0].device, several_gpus()))) {
    return "the worker log: " + *problem;
  }
  return std::nullopt;
}

SessionResult Session::run() {
  started_at_ = std::chrono::steady_clock::now();
  set_state(SessionState::starting);
  struct FinishOnExit {
    Session* s;
    ~FinishOnExit() { s->set_state(SessionState::finished); }
  } finish_on_exit{this};

  // 1. Input: nothing has started yet.
  if (auto problem = check_options()) return refused(SessionOutcome::bad_input, *problem);

  // 2. The executors and their devices.
  lanes_[0].hello = lanes_[0].executor->start();
  const WorkerHello& hello = lanes_[0].hello;
  if (!hello.has_gpu) {
    const char* flag = options_.devices.empty() ? "--device" : "--devices";
    if (hello.device_count > 0 && lanes_[0].device >= hello.device_count)
      return refused(SessionOutcome::bad_input,
                     fmt::format("{}: device {} does not exist; this machine has {} (use 0..{})", flag,
                                 lanes_[0].device, hello.device_count, hello.device_count - 1));
    return refused(SessionOutcome::no_gpu, hello.no_gpu_reason);
  }
  if (several_gpus()) {
    if (auto refusal = start_more_lanes(hello)) return std::move(*refusal);
  }
  if (auto problem = check_cases_fit(cases_, Registry::instance(), double(hello.device.global_mem_bytes),
                                     hello.device.name))
    return refused(SessionOutcome::bad_input, *problem);
  for (const auto& [who, name] : options_.required_devices)
    if (name != hello.device.name)
      return refused(SessionOutcome::bad_input,
                     fmt::format("{}: tuned on {}, but this GPU is {}; tune on this GPU (`kwb tune`) or leave the "
                                 "file out",
                                 who, name, hello.device.name));
  if (options_.resume && options_.resume->header.run.device) {
    if (auto problem = resume_device_mismatch(*options_.resume->header.run.device, hello.device))
      return refused(SessionOutcome::bad_input, "--resume: " + *problem);
  }
  const auto note = [&](const std::string& text) {
    if (callbacks_.on_note) callbacks_.on_note(text);
  };
  if (!hello.timer_note.empty()) note("note: " + hello.timer_note);

  // 3. Ceilings: cached per device and driver, measured once, datasheet as the labelled fallback.
  SessionResult result;
  Report& report = result.report;
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
  } else if (options_.ceilings != CeilingsChoice::datasheet) {
    if (options_.ceilings == CeilingsChoice::cached_or_measured) measured = load_cached_ceilings(hello.device);
    if (!measured) {
      set_state(SessionState::measuring_ceilings);
      note(options_.ceilings == CeilingsChoice::measure_fresh
               ? "measuring this GPU's ceilings afresh (as `kwb ceilings --refresh`; the cache is updated)..."
               : "measuring this GPU's ceilings (once per device and driver; `kwb ceilings` shows them)...");
      std::string error;
      measured = lanes_[0].executor->measure_ceilings(&error);
      if (!measured) {
        note("could not measure ceilings (" + error + "); using the datasheet");
      } else {
        try {
          save_cached_ceilings(hello.device, *measured);
        } catch (const std::exception& e) {
          note(std::string("warning: could not cache the ceilings (") + e.what() + "); they are measured again next time");
        }
      }
    }
  }
  report.run.ceilings = measured ? *measured : *report.run.datasheet_ceilings;
  const CaseRequest& first = cases_.front();
  const std::string mode(to_string(first.mode));
  if (!options_.resume) describe_settings(report, hello);
  std::string where = fmt::format("{} ({})", hello.device.name, hello.device.uuid);
  if (lanes_.size() > 1) {
    std::string indices;
    for (const auto& lane : lanes_) indices += (indices.empty() ? "" : ",") + std::to_string(lane.device);
    where = fmt::format("{} GPUs {} ({}), one worker each", lanes_.size(), indices, hello.device.name);
  }
  note(fmt::format("{} cases on {}, timer {}, mode {}, preset {}{}", progress_.total, where, hello.timer, mode,
                   first.preset,
                   options_.resume ? fmt::format(" ({} recorded before, resumed)", options_.resume->recorded.size())
                                   : ""));

  // 4. Cases.
  set_state(SessionState::running);
  run_cases(report, result);
  return finish(report, result);
}

std::optional<SessionResult> Session::start_more_lanes(const WorkerHello& first) {
  const int count = first.device_count;
  std::vector<int> devices = options_.devices;
  if (options_.all_devices) {
    if (count < 1)
      return refused(SessionOutcome::bad_input, "--devices all: the worker could not count this machine's GPUs; "
                                                "name them instead, e.g. --devices 0,1");
    devices.assign(1, lanes_[0].device);
    for (int d = 0; d < count && devices.size() < kMaxLanes; ++d)
      if (d != lanes_[0].device) devices.push_back(d);
  }
  for (int d : devices)
    if (count > 0 && d >= count)
      return refused(SessionOutcome::bad_input,
                     fmt::format("--devices: device {} does not exist; this machine has {} (use 0..{}, or all)", d,
                                 count, count - 1));
  for (std::size_t i = 1; i < devices.size(); ++i) add_lane(devices[i], factory_(devices[i]));
  {  // each worker initialises CUDA on its GPU (about a second): in parallel
    std::vector<std::thread> starting;
    for (std::size_t i = 1; i < lanes_.size(); ++i)
      starting.emplace_back([this, i] { lanes_[i].hello = lanes_[i].executor->start(); });
    for (auto& t : starting) t.join();
  }
  for (const auto& lane : lanes_) {
    if (!lane.hello.has_gpu)
      return refused(SessionOutcome::bad_input,
                     fmt::format("--devices: GPU {} cannot run cases: {}", lane.device, lane.hello.no_gpu_reason));
    // One kind of GPU only: the first one's ceilings derive every case, and a time means the same
    // on each.
    if (lane.hello.device.name != first.device.name)
      return refused(SessionOutcome::bad_input,
                     fmt::format("--devices: GPU {} is {} but GPU {} is {}; one run spreads over GPUs of one kind. "
                                 "Run each kind on its own (--device) and compare their reports",
                                 lanes_[0].device, first.device.name, lane.device, lane.hello.device.name));
  }
  return std::nullopt;
}

void Session::describe_settings(Report& report, const WorkerHello& hello) const {
  const CaseRequest& first = cases_.front();
  const std::string mode(to_string(first.mode));
  report.run.settings = {{"mode", mode}, {"preset", first.preset}, {"seed", std::to_string(first.seed)},
                         {"timer", hello.timer}, {"case_timeout_s", fmt::format("{}", options_.case_timeout_s)},
                         {"cases_planned", std::to_string(cases_.size())}};
  if (!hello.timer_note.empty()) report.run.settings["timer_note"] = hello.timer_note;
  if (first.mode == Mode::cold) {
    report.run.settings["flush"] = std::string(to_string(first.flush));
    report.run.settings["l2_flush"] = describe_flush(first.flush, hello.device.l2_bytes);
  }
  for (const auto& [key, value] : options_.settings) report.run.settings[key] = value;
}

SessionResult Session::finish(Report& report, SessionResult& result) {
  // 5. Reports, atomically; cancelled runs still get theirs, marked incomplete.
  derive_speedups(report.cases);
  const bool cancelled = cancel_.load() != 0;
  report.run.complete = !cancelled;
  report.run.finished_at = now_utc();
  int restarts = 0;
  for (const auto& lane : lanes_) restarts += lane.executor->restarts();
  report.run.settings["worker_restarts"] = std::to_string(restarts);
  if (options_.out) {
    try {
      write_report_json(*options_.out / "report.json", report);
      write_report_csv(*options_.out / "report.csv", report);
    } catch (const std::exception& e) {
      result.write_errors.push_back(std::string("cannot write the reports: ") + e.what());
    }
  }
  result.outcome = cancelled ? SessionOutcome::cancelled : SessionOutcome::completed;
  return std::move(result);
}

void Session::run_cases(Report& report, SessionResult& result) {
  std::unique_ptr<Journal> journal;
  if (options_.out) {
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
  }
  // The report's cases by plan position: those measured before an interruption are kept as they
  // are and not run again; the others are filled in by the lanes as they finish.
  std::vector<std::optional<CaseRecord>> slots(cases_.size());
  std::vector<std::size_t> pending;
  for (std::size_t i = 0; i < cases_.size(); ++i) {
    if (options_.resume) {
      if (auto it = options_.resume->recorded.find(case_identity(cases_[i])); it != options_.resume->recorded.end()) {
        slots[i] = it->second;
        continue;
      }
    }
    pending.push_back(i);
  }
  const std::vector<std::vector<std::size_t>> groups = input_groups(pending, lanes_.size() > 1);
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> others;
  for (std::size_t lane = 1; lane < lanes_.size(); ++lane)
    others.emplace_back([&, lane] { run_lane(lane, groups, next, slots, journal, result, *report.run.ceilings); });
  run_lane(0, groups, next, slots, journal, result, *report.run.ceilings);  // the first GPU on this thread
  for (auto& t : others) t.join();
  for (auto& slot : slots)
    if (slot) report.cases.push_back(std::move(*slot));
}

std::vector<std::vector<std::size_t>> Session::input_groups(const std::vector<std::size_t>& pending,
                                                            bool largest_first) const {
  std::vector<std::vector<std::size_t>> groups;
  std::string last;
  for (std::size_t i : pending) {
    const CaseRequest& c = cases_[i];
    std::string key = fmt::format("{}|{}|{}|{}", c.op, to_string(c.dtype), c.shape.to_assignments(), c.seed);
    if (groups.empty() || key != last) groups.emplace_back();
    groups.back().push_back(i);
    last = std::move(key);
  }
  if (largest_first) {
    // Longest first, so that no GPU is left with a big group while the others idle at the end. A
    // group's cost is taken as the bytes its cases move (the work model): the GPU time and the
    // host's input and oracle work both grow with them.
    const auto cost = [&](const std::vector<std::size_t>& group) {
      double bytes = 0;
      for (std::size_t i : group)
        if (const Op* op = Registry::instance().find_op(cases_[i].op))
          bytes += op->work ? op->work(cases_[i].shape, cases_[i].dtype).bytes : 0;
      return bytes;
    };
    std::vector<std::pair<double, std::size_t>> order;
    for (std::size_t g = 0; g < groups.size(); ++g) order.push_back({-cost(groups[g]), g});
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::vector<std::size_t>> sorted;
    for (const auto& [_, g] : order) sorted.push_back(std::move(groups[g]));
    groups = std::move(sorted);
  }
  return groups;
}

void Session::run_lane(std::size_t lane, const std::vector<std::vector<std::size_t>>& groups,
                       std::atomic<std::size_t>& next, std::vector<std::optional<CaseRecord>>& slots,
                       std::unique_ptr<Journal>& journal, SessionResult& result, const Ceilings& ceilings) {
  while (cancel_.load() == 0) {
    const std::size_t g = next.fetch_add(1);
    if (g >= groups.size()) break;
    for (std::size_t i : groups[g]) {
      if (cancel_.load() != 0) break;
      run_one(lane, i, slots, journal, result, ceilings);
    }
  }
}

void Session::run_one(std::size_t lane, std::size_t i, std::vector<std::optional<CaseRecord>>& slots,
                      std::unique_ptr<Journal>& journal, SessionResult& result, const Ceilings& ceilings) {
  CaseExecutor& executor = *lanes_[lane].executor;
  const CaseRequest& c = cases_[i];
  {
    std::lock_guard lock(mutex_);
    in_flight_[lane] = fmt::format("{}:{}:{}:{}", c.op, c.variant, to_string(c.dtype), c.shape.to_compact());
  }
  const auto case_start = std::chrono::steady_clock::now();
  CaseRecord rec;
  try {
    rec = executor.run_case(c);
  } catch (const std::exception& e) {  // a bug of ours must not cost the cases already measured
    rec = record_for(c);
    rec.disposition = Disposition::failed;
    rec.reason = std::string("internal error while running the case: ") + e.what();
  }
  if (cancel_.load() == 1 + static_cast<int>(CancelMode::abandon_current)) {
    rec.disposition = Disposition::failed;
    if (rec.reason.rfind("cancelled", 0) != 0)
      rec.reason = "cancelled: abandoned while it ran" + (rec.reason.empty() ? "" : " (" + rec.reason + ")");
  }
  rec.repro = repro_command(c);
  if (lanes_.size() > 1) rec.device = lanes_[lane].device;
  if (const Variant* v = Registry::instance().find_variant(c.op, c.variant)) {
    rec.role = v->role;
    rec.workspace_bytes = v->workspace_bytes ? static_cast<std::int64_t>(v->workspace_bytes(c.shape, c.dtype)) : 0;
  }
  derive_metrics(rec, Registry::instance(), ceilings);

  std::lock_guard deliver(deliver_mutex_);  // one record at a time into the journal and callbacks
  if (journal) {
    try {
      journal->append(rec);
    } catch (const std::exception& e) {
      result.write_errors.push_back(std::string("cannot write the journal: ") + e.what());
      journal.reset();  // the cases go on; the reports at the end still hold them
    }
  }
  slots[i] = rec;
  {
    std::lock_guard lock(mutex_);
    case_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - case_start).count();
    ++progress_.done;
    progress_.failed += rec.disposition == Disposition::failed;
    in_flight_[lane].clear();
    if (options_.queue_records) queue_.push_back(rec);
  }
  record_ready_.notify_all();
  if (callbacks_.on_record) callbacks_.on_record(rec, progress());
}

}  // namespace kwb
