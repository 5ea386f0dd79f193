// The run loop behind `kwb run`, the app's live runs and suites: run() is a list of phases
// (checks, start-up, the run's description and ceilings, cases, reports). This file holds the
// session's life (construction, cancel, progress, records for other threads), run() and its
// first phases; session_report.cpp what it writes (run info, ceilings, journal, reports) and
// session_lanes.cpp how the cases run over the GPUs.
#include "harness/session/session.hpp"

#include <unistd.h>

#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/plan/metric_host.hpp"
#include "harness/plan/planner.hpp"
#include "harness/record/output_paths.hpp"
#include "harness/session/resume_plan.hpp"
#include "harness/session/supervisor.hpp"
#include "harness/session/worker_memory.hpp"

namespace kwb {
namespace {

const std::vector<std::string> kOutputFiles = {"journal.jsonl", "report.json", "report.csv", "worker.log"};

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
      SupervisorOptions o{options_.worker_exe, device, options_.timer, options_.case_timeout_s,
                          worker_log_path(options_, device, several_gpus())};
      o.counters = !cases_.empty() && !cases_.front().counter_metrics.empty();
      o.environment.push_back(worker_memory_environment());
      for (const auto& [name, value] : options_.worker_environment) o.environment.emplace_back(name, value);
      return std::make_unique<Supervisor>(std::move(o));
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

void Session::note(const std::string& text) const {
  if (callbacks_.on_note) callbacks_.on_note(text);
}

SessionResult Session::run() {
  started_at_ = std::chrono::steady_clock::now();
  set_state(SessionState::starting);
  struct FinishOnExit {
    Session* s;
    ~FinishOnExit() { s->set_state(SessionState::finished); }
  } finish_on_exit{this};
  // The session's stages, for the run's time report (RunInfo::session_stages_s).
  std::vector<std::pair<std::string, double>> stages;
  auto stage_start = started_at_;
  const auto end_stage = [&](const char* name) {
    const auto now = std::chrono::steady_clock::now();
    stages.emplace_back(name, std::chrono::duration<double>(now - stage_start).count());
    stage_start = now;
  };

  // 1. Input: nothing has started yet (checking the output folder creates it).
  std::error_code out_ec;  // a folder that cannot even be looked at is check_options' to refuse
  const bool out_existed = options_.out && std::filesystem::exists(*options_.out, out_ec);
  if (auto problem = check_options()) return refused(SessionOutcome::bad_input, *problem);

  // 2. The executors and their devices, and the plan against them. A refusal here leaves no empty
  //    log or folder behind.
  if (auto refusal = start_lanes()) {
    discard_empty_outputs(out_existed);
    return std::move(*refusal);
  }
  const WorkerHello& hello = lanes_[0].hello;
  std::optional<std::string> problem = check_plan_on_device(hello);
  if (!problem) problem = check_counters(hello);
  if (problem) {
    discard_empty_outputs(out_existed);
    return refused(SessionOutcome::bad_input, *problem);
  }
  if (!hello.timer_note.empty()) note("note: " + hello.timer_note);
  end_stage("start workers");

  // 3. The run's description: who, when, where; the ceilings, cached per device and driver,
  //    measured once, datasheet as the labelled fallback; the settings.
  SessionResult result;
  Report& report = result.report;
  describe_run(report, hello);
  announce_plan(hello);
  end_stage("ceilings");

  // 4. Cases.
  set_state(SessionState::running);
  run_cases(report, result);
  end_stage("cases");
  report.run.session_stages_s = std::move(stages);

  // 5. Reports, atomically; cancelled runs still get theirs, marked incomplete.
  return finish(report, result);
}

// 1. The options and the output folder, before anything starts.
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

void Session::discard_empty_outputs(bool out_existed) const {
  std::error_code ec;
  for (std::size_t i = 0; i < lanes_.size(); ++i) {
    const std::filesystem::path log = worker_log_path(options_, lanes_[i].device, several_gpus());
    if (std::filesystem::is_regular_file(log, ec) && std::filesystem::file_size(log, ec) == 0)
      std::filesystem::remove(log, ec);
  }
  if (options_.out && !out_existed && std::filesystem::is_empty(*options_.out, ec)) std::filesystem::remove(*options_.out, ec);
}

// 2. The first GPU's worker starts and says what it found; then, for several GPUs, the others.
std::optional<SessionResult> Session::start_lanes() {
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
  if (several_gpus()) return start_more_lanes(hello);
  return std::nullopt;
}

// 2. The other GPUs' workers, started in parallel; every GPU must work and be of the first one's kind.
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

// 2. The plan against the device the first worker found: the cases' memory, the GPU a tuning
// file was made on, the GPU a resumed journal was measured on.
std::optional<std::string> Session::check_plan_on_device(const WorkerHello& hello) const {
  if (auto problem = check_cases_fit(cases_, Registry::instance(), double(hello.device.global_mem_bytes),
                                     hello.device.name))
    return problem;
  for (const auto& [who, name] : options_.required_devices)
    if (name != hello.device.name)
      return fmt::format("{}: tuned on {}, but this GPU is {}; tune on this GPU (`kwb tune`) or leave "
                         "the file out",
                         who, name, hello.device.name);
  if (options_.resume && options_.resume->header.run.device) {
    if (auto problem = resume_device_mismatch(*options_.resume->header.run.device, hello.device))
      return "--resume: " + *problem;
  }
  return std::nullopt;
}

// 2. Counters: every metric the cases ask for is checked against the GPU's chip before the first
// case (a name the chip lacks is refused, with a did-you-mean), and the replay passes each case
// costs are counted, to be announced and recorded.
std::optional<std::string> Session::check_counters(const WorkerHello& hello) {
  const CaseRequest& first = cases_.front();
  if (first.counter_metrics.empty()) return std::nullopt;
  const std::string sets = first.counter_sets.empty() ? std::string("metrics")
                                                      : fmt::format("{}", fmt::join(first.counter_sets, ", "));
  const std::string& chip = hello.device.chip;
  if (chip.empty()) {
    counters_plan_ = fmt::format("{}: {} metrics (CUPTI names no chip for this GPU: the worker will say whether it "
                                 "can read them)",
                                 sets, first.counter_metrics.size());
    return std::nullopt;
  }
  // Without CUPTI's host library here the worker cannot read counters either: the run goes on
  // timing, and the worker's records say why (noted once).
  if (auto why = host_api_problem()) {
    counters_plan_ = fmt::format("{}: {} metrics, not checked against {}: {}", sets, first.counter_metrics.size(),
                                 chip, *why);
    return std::nullopt;
  }
  try {
    MetricCatalog catalogue(chip);
    for (const std::string& metric : first.counter_metrics)
      if (auto problem = catalogue.problem(metric))
        return fmt::format("--counters/--metrics: {}; `kwb counters --list --chip {}` shows what it has", *problem, chip);
    const int passes = catalogue.passes_as_collected(first.counter_metrics);
    counters_plan_ = fmt::format("{}: {} metrics, {} replay pass{} per case on {}, after timing (times come from the "
                                 "timing pass)",
                                 sets, first.counter_metrics.size(), passes, passes == 1 ? "" : "es", chip);
  } catch (const CounterError& e) {
    return std::string("--counters/--metrics: ") + e.what();
  }
  return std::nullopt;
}

}  // namespace kwb
