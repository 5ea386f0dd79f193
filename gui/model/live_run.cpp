// A live run on the session's thread, fed to the UI thread's workbench by poll(). Why these
// choices:
//   - The session runs in a std::async of its own (Session::run) rather than Session::start():
//     the future's readiness is the one signal that also covers a run refused before any case
//     (bad output folder, no GPU), where the session's state never reaches `finished`.
//   - Records reach the workbench only from poll(), on the UI thread: the model is not locked,
//     so nothing but the UI thread may touch it.
//   - The live report is added to the workbench with the first record, so a run refused by the
//     session leaves the workbench as it was.
#include "gui/model/live_run.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <sstream>

#include <fmt/format.h>

#include "gui/model/report_loader.hpp"
#include "harness/catalogue/plugin_loader.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/types.hpp"
#include "harness/plan/run_request.hpp"
#include "harness/plan/suite_plugins.hpp"
#include "harness/worker/measure/device_info.hpp"

namespace kwb::gui {

namespace {

// "a, b,,c" -> {"a", "b", "c"}: the panel's fields are typed by hand.
std::vector<std::string> split(const std::string& text, const std::string& separators) {
  std::vector<std::string> parts;
  std::string part;
  auto flush = [&] {
    const auto first = part.find_first_not_of(" \t");
    const auto last = part.find_last_not_of(" \t");
    if (first != std::string::npos) parts.push_back(part.substr(first, last - first + 1));
    part.clear();
  };
  for (char c : text) {
    if (separators.find(c) != std::string::npos) flush();
    else part += c;
  }
  flush();
  return parts;
}

std::filesystem::path default_out_dir() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "live-%Y%m%d-%H%M%S", &local);
  return std::filesystem::path("results") / stamp;
}

std::string eta_text(double seconds) {
  if (seconds < 90) return fmt::format("{:.0f} s", seconds);
  if (seconds < 5400) return fmt::format("{:.0f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

}  // namespace

const GpuPresence& gpu_presence() {
  // The CUDA runtime answers in a few hundred milliseconds the first time: once per process.
  static const GpuPresence presence = [] {
    GpuPresence p;
    std::string why;
    const int count = cuda_device_count(&why);
    p.present = count > 0;
    if (!p.present)
      p.reason = why.empty() ? "the CUDA runtime sees no GPU on this machine" : why;
    return p;
  }();
  return presence;
}

std::string default_worker_exe() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    // build/gui/kwb-gui sits one folder below build/kwb; an installed pair sits side by side.
    for (const auto& candidate : {self.parent_path().parent_path() / "kwb", self.parent_path() / "kwb"})
      if (std::filesystem::is_regular_file(candidate, ec)) return candidate.string();
  }
  return "kwb";
}

std::string field_label(Setting setting) {
  switch (setting) {
    case Setting::op: return "ops";
    case Setting::variant: return "variants";
    case Setting::dtype: return "dtypes";
    case Setting::axis: return "axes";
    case Setting::suite: return "suite file";
    case Setting::preset: return "preset";
    case Setting::datasheet_ceilings: return "datasheet ceilings";
    default: return std::string(setting_id(setting));
  }
}

std::string panel_message(const std::exception& refusal) {
  if (const auto* e = dynamic_cast<const SettingError*>(&refusal)) return e->worded(field_label);
  return refusal.what();
}

std::vector<CaseRequest> plan_live_run(const LiveRunRequest& request, SessionOptions& options) {
  // The panel's fields as the request layer's settings; it plans exactly as for `kwb run`.
  RunSettings settings;
  settings.ops = split(request.ops, ",");
  settings.variants = split(request.variants, ",");
  settings.dtypes = split(request.dtypes, ",");
  settings.axes = split(request.axes, " \t;\n");
  settings.preset = request.preset;
  settings.suite = request.suite;
  settings.datasheet_ceilings = request.datasheet_ceilings;
  settings.given.axis = !settings.axes.empty();
  settings.given.preset = true;  // the panel always shows a preset: it wins over a suite's, as --preset does
  // A suite's plugins and Python files join the catalogue first, as for `kwb run --suite`; the
  // workers load the very files (refusing one changed since).
  load_suite_plugins(request.suite);
  options.worker_environment = plugin_environment();
  PlannedRun planned = plan_run(settings, Registry::instance());
  if (planned.cases.empty()) throw no_case_selected();
  options.suite = std::move(planned.suite);
  options.ceilings = planned.ceilings;
  return std::move(planned.cases);
}

LiveRun::~LiveRun() {
  // Closing the app mid-run: the case in flight is abandoned (its worker ended), not waited for.
  if (session_ && result_.valid()) {
    session_->cancel(CancelMode::abandon_current);
    result_.wait();
  }
}

bool LiveRun::start(const LiveRunRequest& request, Workbench& wb, ExecutorFactory factory) {
  if (running()) {
    error_ = "a live run is going: cancel it or let it finish first";
    return false;
  }
  session_.reset();
  finished_ = false;
  error_.clear();
  received_ = 0;
  report_ = -1;
  report_path_.reset();
  outcome_.reset();
  last_progress_ = {};

  SessionOptions options;
  std::vector<CaseRequest> cases;
  try {
    cases = plan_live_run(request, options);
  } catch (const std::exception& e) {  // SettingError, SuiteError
    error_ = panel_message(e);
    return false;
  }
  if (!factory && !gpu_presence().present) {  // the fake executors of the tests need no GPU
    error_ = "no GPU: " + gpu_presence().reason;
    return false;
  }
  out_ = request.out.empty() ? default_out_dir() : std::filesystem::path(request.out);
  name_ = (out_.filename().empty() ? out_.parent_path().filename() : out_.filename()).string() + " (live)";
  options.out = out_;
  options.queue_records = true;  // poll() takes them; no callback touches the model off its thread
  options.worker_exe = request.worker_exe.empty() ? default_worker_exe() : request.worker_exe;
  options.device = request.device;
  options.command_line = fmt::format("kwb-gui live run: ops '{}' variants '{}' dtypes '{}' axes '{}' suite '{}' "
                                     "preset {}", request.ops, request.variants, request.dtypes, request.axes,
                                     request.suite, request.preset);
  options.settings["started_by"] = "kwb-gui live run";
  last_progress_.total = cases.size();
  session_ = std::make_unique<Session>(std::move(cases), std::move(options), std::move(factory));
  Session* session = session_.get();
  result_ = std::async(std::launch::async, [session] { return session->run(); });
  (void)wb;  // the live report joins the workbench with the first record (see the top)
  return true;
}

int LiveRun::live_index(Workbench& wb) {
  const auto& reports = wb.reports();
  if (report_ >= 0 && report_ < static_cast<int>(reports.size()) && reports[report_].name == name_)
    return report_;
  // Not there yet, or closed by the user meanwhile: (again) an empty report that records join.
  LoadedReport live;
  live.path = out_ / "report.json";
  live.name = name_;
  live.report.run.complete = false;
  report_ = wb.add_live_report(std::move(live));
  name_ = wb.reports()[report_].name;  // numbered where another open report had the name
  return report_;
}

std::size_t LiveRun::poll(Workbench& wb) {
  if (!session_ || finished_) return 0;
  std::vector<CaseRecord> records = session_->take_records();
  last_progress_ = session_->progress();
  const std::size_t n = records.size();
  if (n > 0) {
    wb.append_cases(live_index(wb), std::move(records));
    received_ += n;
  }
  if (result_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) finish(wb);
  return n;
}

void LiveRun::finish(Workbench& wb) {
  SessionResult result = result_.get();
  // Records delivered between the last take and the end of run().
  std::vector<CaseRecord> rest = session_->take_records();
  if (!rest.empty()) {
    received_ += rest.size();
    wb.append_cases(live_index(wb), std::move(rest));
  }
  last_progress_ = session_->progress();
  outcome_ = result.outcome;
  finished_ = true;
  session_.reset();  // joins nothing (run() has returned); frees the executors

  if (result.outcome == SessionOutcome::bad_input || result.outcome == SessionOutcome::no_gpu) {
    error_ = (result.outcome == SessionOutcome::no_gpu ? "no GPU: " : "") + result.message;
    wb.add_message(Message::Level::error, "live run: " + error_);
    return;
  }
  for (const auto& e : result.write_errors) error_ += (error_.empty() ? "" : "; ") + e;
  const std::filesystem::path path = out_ / "report.json";
  // The report as the session wrote it (what `kwb run` leaves): run info and ceilings included,
  // so the roofline gets its roofs. Where it could not be written, the in-memory one stands in.
  LoadOutcome loaded;
  if (result.write_errors.empty()) loaded = load_report(path);
  LoadedReport final_report;
  if (loaded.loaded) {
    final_report = std::move(*loaded.loaded);
    report_path_ = path;
  } else {
    if (!loaded.error.empty()) error_ += (error_.empty() ? "" : "; ") + loaded.error;
    final_report.path = path;
    final_report.name = name_;
    final_report.report = std::move(result.report);
  }
  if (report_ >= 0 || !final_report.report.cases.empty()) {
    const int index = live_index(wb);
    wb.replace_report(index, std::move(final_report));
    name_ = wb.reports()[index].name;
  }
  wb.add_message(error_.empty() ? Message::Level::info : Message::Level::error,
                 fmt::format("live run {}: {} cases{}{}", to_string(result.outcome), received_,
                             report_path_ ? ", saved as " + report_path_->string() : "",
                             error_.empty() ? "" : " (" + error_ + ")"));
}

void LiveRun::cancel(CancelMode mode) {
  if (running()) session_->cancel(mode);
}

SessionProgress LiveRun::progress() const { return running() ? session_->progress() : last_progress_; }

std::string LiveRun::status() const {
  if (!session_ && !finished_) return error_.empty() ? "ready" : "not started: " + error_;
  const SessionProgress p = progress();
  if (finished_) {
    std::string s = fmt::format("{}: {} of {} cases ({} failed)", outcome_ ? to_string(*outcome_) : "finished",
                                p.done, p.total, p.failed);
    if (report_path_) s += ", saved as " + report_path_->string();
    if (!error_.empty()) s += "; " + error_;
    return s;
  }
  const char* state = p.state == SessionState::starting             ? "starting the worker"
                      : p.state == SessionState::measuring_ceilings ? "measuring the ceilings"
                      : p.cancel_requested                          ? "cancelling after the current case"
                                                                    : "running";
  std::string s = fmt::format("{}: {} of {} cases", state, p.done, p.total);
  if (p.failed) s += fmt::format(" ({} failed)", p.failed);
  if (p.eta_s) s += ", about " + eta_text(*p.eta_s) + " left";
  if (!p.current.empty()) s += "; now " + p.current;
  return s;
}

}  // namespace kwb::gui
