// `kwb run`: flags -> the request layer's plan -> Session; prints each case as it finishes and
// the summary. `kwb run --resume DIR`: journal -> its flags -> the same plan -> the cases not yet
// recorded. run_from_flags reads as its phases: take the journal's flags, plan, check against
// the journal, stop before running (list, empty plan), run the session, report.
#include <atomic>
#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <set>

#include "cli/commands.hpp"
#include "cli/flag_values.hpp"
#include "cli/plugin_flags.hpp"
#include "harness/catalogue/plugin_loader.hpp"
#include "harness/session/journal_plugins.hpp"
#include "harness/catalogue/excerpt.hpp"
#include "cli/run_flags.hpp"
#include "cli/progress_display.hpp"
#include "cli/run_output.hpp"
#include "cli/session_progress.hpp"
#include "harness/derive/derive.hpp"
#include "harness/plan/run_request.hpp"
#include "harness/plan/shard.hpp"
#include "harness/worker/oracle_cache/oracle_cache_settings.hpp"
#include "harness/worker/test_slowdown.hpp"
#include "harness/session/resume_plan.hpp"
#include "harness/session/session.hpp"
#include "harness/record/csv_report.hpp"
#include "harness/record/journal_reader.hpp"
#include "harness/record/stage_times.hpp"

namespace kwb::cli {
namespace {

// The verb the messages name: run, or tune when the tune verb runs its search here.
std::string g_verb = "run";
std::string verb() { return "kwb " + g_verb; }

// The flags that shape the plan and its settings, as recorded in the journal's header (only
// those written out: defaults may change between versions, and a suite's values yield to them).
// --out, --list-cases and --resume are not among them.
struct PlanFlag {
  const char* name;  // without "--"
  std::string RunFlags::*text = nullptr;
  std::vector<std::string> RunFlags::*list = nullptr;
  bool RunFlags::*flag = nullptr;
};
const std::vector<PlanFlag> kPlanFlags = {
    {"op", nullptr, &RunFlags::ops}, {"variant", nullptr, &RunFlags::variants},
    {"dtype", nullptr, &RunFlags::dtypes}, {"axis", nullptr, &RunFlags::axes},
    {"shapes", &RunFlags::shapes}, {"mode", &RunFlags::mode}, {"flush", &RunFlags::flush},
    {"launch", &RunFlags::launch},
    {"preset", &RunFlags::preset}, {"seed", &RunFlags::seed}, {"timer", &RunFlags::timer},
    {"case-timeout", &RunFlags::case_timeout_s}, {"max-cases", &RunFlags::max_cases},
    {"suite", &RunFlags::suite}, {"shard", &RunFlags::shard},  // a preempted shard resumes its own slice
    {"tuning", nullptr, &RunFlags::tuning},
    {"counters", nullptr, &RunFlags::counter_sets}, {"metrics", nullptr, &RunFlags::metrics},
    {"include-test-variants", nullptr, nullptr, &RunFlags::include_test_variants},
    {"datasheet-ceilings", nullptr, nullptr, &RunFlags::datasheet_ceilings}};

nlohmann::ordered_json given_plan_flags(const CLI::App& cmd, const RunFlags& f) {
  auto j = nlohmann::ordered_json::object();
  for (const auto& p : kPlanFlags) {
    if (cmd.count(std::string("--") + p.name) == 0) continue;
    if (p.text) j[p.name] = f.*p.text;
    else if (p.list) j[p.name] = f.*p.list;
    else j[p.name] = f.*p.flag;
  }
  return j;
}

// The run flags of a journal's header (defaults for the rest), as the interrupted run had them.
RunFlags flags_from_journal(const nlohmann::ordered_json& recorded) {
  RunFlags f;
  for (const auto& p : kPlanFlags) {
    const auto it = recorded.find(p.name);
    if (it == recorded.end()) continue;
    try {
      if (p.text) f.*p.text = it->get<std::string>();
      else if (p.list) f.*p.list = it->get<std::vector<std::string>>();
      else f.*p.flag = it->get<bool>();
    } catch (const nlohmann::ordered_json::exception&) {
      throw ResumeError(fmt::format("the journal's header: plan_flags.{}: wrong type", p.name));
    }
  }
  f.given = {.axis = recorded.contains("axis"), .shapes = recorded.contains("shapes"),
             .mode = recorded.contains("mode"), .flush = recorded.contains("flush"),
             .preset = recorded.contains("preset"), .seed = recorded.contains("seed"),
             .launch = recorded.contains("launch")};
  return f;
}

// Ctrl-C (SIGINT) or SIGTERM (`timeout`, a CI job's limit, a batch scheduler): the case in
// flight finishes, then the run stops and writes its reports. A second signal abandons the case
// in flight (a long or hung case): its worker is ended at once. The worker ignores both (a
// signal to the process group reaches it too): its parent decides when it ends.
Session* g_session = nullptr;
std::atomic<int> g_stop_signals{0};
void on_stop_signal(int) {
  if (Session* s = g_session)
    s->cancel(g_stop_signals++ == 0 ? CancelMode::finish_current : CancelMode::abandon_current);
}

// The reports of a resumed sweep from its journal alone: every case recorded (--no-measure, or
// nothing left to measure). Marked incomplete when cases of the plan are missing.
int write_journal_reports(const std::filesystem::path& out, const JournalHeader& header, const ResumePlan& plan,
                          const std::vector<CounterColumn>& columns) {
  Report report{header.run, recorded_in_plan_order(header, plan)};
  report.run.complete = plan.remaining.empty();
  if (!plan.remaining.empty()) report.run.settings["cases_missing"] = std::to_string(plan.remaining.size());
  derive_speedups(report.cases);
  try {
    write_report_json(out / "report.json", report);
    write_report_csv(out / "report.csv", report);
  } catch (const std::exception& e) {
    std::cerr << verb() << ": error: cannot write the reports: " << e.what() << "\n";
    return kExitCaseFailed;
  }
  print_summary(std::cout, report, columns);
  std::cerr << fmt::format("{}: wrote {} and {} from the journal alone ({} of {} planned cases{})\n", verb(),
                           (out / "report.json").string(), (out / "report.csv").string(), report.cases.size(),
                           header.plan.size(), plan.remaining.empty() ? "" : "; marked incomplete");
  for (const auto& r : report.cases)
    if (r.disposition == Disposition::failed) return kExitCaseFailed;
  return kExitOk;
}

// The cases to run and the session's options, as the flags give them.
struct RunPlan {
  std::vector<CaseRequest> cases;
  SessionOptions options;
  std::vector<CounterColumn> columns;  // --columns, checked against the counters the plan collects
  OracleCacheSettings oracle_cache;    // --oracle-cache, --oracle-cache-max-bytes, the environment
};

std::filesystem::path journal_path_of(const std::string& resume_dir) {
  return std::filesystem::path(resume_dir) / "journal.jsonl";
}

// Phase 1, `--resume DIR`: the journal, and the plan flags it recorded in place of `f`'s (the
// plan flags given now must agree with them: checked in phase 3). An exit code when the journal
// cannot be read.
std::optional<int> take_journal_flags(RunFlags& f, std::optional<JournalContents>& journal) {
  const std::filesystem::path journal_path = journal_path_of(f.resume);
  try {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(journal_path, ec))
      throw ResumeError(fmt::format("--resume: there is no journal {}; give the --out folder of the run to resume",
                                    journal_path.string()));
    journal = read_journal_contents(journal_path);
    const nlohmann::ordered_json& plan_flags = require_header(*journal, journal_path.string()).plan_flags;
    load_journal_plugins(plan_flags);  // before planning: the plan names their ops
    RunFlags recorded = flags_from_journal(plan_flags);
    recorded.resume = f.resume;
    recorded.no_measure = f.no_measure;
    recorded.out = f.resume;
    recorded.device = f.device;  // the GPUs are chosen now (a different one is refused later)
    recorded.devices = f.devices;
    recorded.columns = f.columns;  // what is printed is chosen now
    recorded.progress = f.progress;
    recorded.time_report = f.time_report;
    recorded.oracle_cache = f.oracle_cache;  // so is the oracle cache
    recorded.oracle_cache_max_bytes = f.oracle_cache_max_bytes;
    f = std::move(recorded);
  } catch (const std::exception& e) {  // ReportError (file:line), ResumeError
    std::cerr << verb() << ": " << e.what() << "\n";
    return kExitBadInput;
  }
  for (const auto& w : journal->warnings) std::cerr << verb() << ": warning: " << w << "\n";
  return std::nullopt;
}

// Phase 2: the request layer's plan (harness/plan/run_request.hpp), then what only the command
// line has: the shard, the timer, the test switch, the GPUs and the watchdog. Throws
// std::invalid_argument (SettingError, SuiteError, TuningError, FlagError).
RunPlan plan_from_flags(const RunFlags& f, const nlohmann::ordered_json& given_flags) {
  RunPlan p;
  SessionOptions& options = p.options;
  options.plan_flags = given_flags;
  // The plugins loaded (flags, suite, $KWB_PLUGINS), with their hashes: a resume loads the same
  // files and refuses changed ones (plugin_flags.hpp).
  if (!Registry::instance().plugins().empty()) options.plan_flags[kJournalPluginsKey] = plugins_json(Registry::instance());
  PlannedRun planned = plan_run(f, Registry::instance());
  p.cases = std::move(planned.cases);
  options.suite = std::move(planned.suite);
  options.ceilings = planned.ceilings;
  for (const TuningTable& t : planned.tuning) options.required_devices.push_back({"--tuning " + t.path, t.device});
  if (!planned.tuning.empty()) options.settings["tuning"] = planned.tuning_note;
  if (!f.shard.empty()) {  // the whole plan is made on every host, then sliced the same way
    const ShardSpec spec = parse_shard("--shard", f.shard);
    options.shard = ShardInfo{spec.index, spec.count, static_cast<std::int64_t>(p.cases.size()), plan_digest(p.cases)};
    p.cases = select_shard(p.cases, spec);
  }
  check_choice("--timer", f.timer, {"auto", "cupti", "events"});
  // A test switch: the report must say it was on, and hold its exact value for --confirm.
  const std::vector<TestSlowdown> slowdowns = test_slowdowns_from_env();
  for (const TestSlowdown& slowdown : slowdowns)
    if (!Registry::instance().find_variant(slowdown.op, slowdown.variant))
      throw FlagError(fmt::format("{}: there is no variant '{}' of op '{}' (`kwb list` shows them)",
                                  kTestSlowdownEnv, slowdown.variant, slowdown.op));
  for (auto& [key, value] : test_slowdown_settings(slowdowns)) options.settings[key] = std::move(value);
  options.device = parse_device_index("--device", f.device);
  if (!f.devices.empty()) {
    const DeviceList list = parse_device_list("--devices", f.devices);
    options.all_devices = list.all;
    options.devices = list.indices;
  }
  options.case_timeout_s = parse_positive_seconds("--case-timeout", f.case_timeout_s);
  p.columns = parse_counter_columns(f.columns, planned.counters);
  p.oracle_cache = resolve_oracle_cache_settings(f.oracle_cache, f.oracle_cache_max_bytes);
  return p;
}

// Phase 3, resuming: the plan against the journal; the cases it recorded are not run again. An
// exit code when nothing is left to measure (or --no-measure): the reports from the journal alone.
std::optional<int> resume_against(const RunFlags& f, const JournalContents& journal,
                                  const nlohmann::ordered_json& given_flags, RunPlan& p) {
  std::vector<std::string> identities;
  for (const auto& c : p.cases) identities.push_back(case_identity(c));
  const ResumePlan plan = plan_resume(journal, journal_path_of(f.resume).string(), given_flags, identities);
  if (f.no_measure || plan.remaining.empty()) return write_journal_reports(f.resume, *journal.header, plan, p.columns);
  p.options.resume = SessionOptions::Resume{*journal.header, plan.recorded};
  p.options.plan_flags = journal.header->plan_flags;
  return std::nullopt;
}

// Phase 4: a plan that runs nothing: a shard with no case, no case at all, --list-cases, or no
// output folder. Its exit code, or none when the session is to run.
std::optional<int> without_running(const RunFlags& f, const RunPlan& p) {
  const SessionOptions& options = p.options;
  if (p.cases.empty() && options.shard) {  // more shards than cases: this one has nothing to do
    std::cerr << fmt::format("{}: shard {}/{} of a plan of {} cases holds no case; nothing run, no report "
                             "written (kwb merge does not expect one)\n",
                             verb(), options.shard->index, options.shard->count, options.shard->plan_cases);
    return kExitOk;
  }
  if (p.cases.empty()) {
    std::cerr << verb() << ": " << no_case_selected().what() << "\n";
    return kExitBadInput;
  }
  if (f.list_cases) {  // the plan, one case identity a line (the NVTX range name), and nothing run
    for (const auto& c : p.cases) std::cout << case_identity(c) << "\n";
    const std::string slice = options.shard ? fmt::format(" in shard {}/{} (of {} in the plan, digest {})",
                                                          options.shard->index, options.shard->count,
                                                          options.shard->plan_cases, options.shard->plan_digest)
                                            : "";
    std::cerr << fmt::format("{}: {} cases planned{}{}, mode {}{}, preset {}; nothing run (--list-cases)\n",
                             verb(), p.cases.size(), slice, options.suite ? " by suite '" + excerpt(options.suite->name) + "'" : "",
                             to_string(p.cases.front().mode), launch_note(p.cases.front().launch),
                             p.cases.front().preset);
    return kExitOk;
  }
  if (f.out.empty()) {
    std::cerr << verb() << ": --out: the folder name is empty; pass a folder for the reports, e.g. --out results\n";
    return kExitBadInput;
  }
  return std::nullopt;
}

// Phase 5: the session. Records are journaled by it and printed here as they arrive; Ctrl-C
// and SIGTERM stop it (on_stop_signal). Sharded cases keep their plan position as index:
// progress counts against the whole plan; a resumed run counts the cases still to measure.
// The display (a bar on a terminal, lines in a log: `--progress`) is cleared when this returns,
// before the summary is printed.
SessionResult run_session(RunPlan p, ProgressStyle style) {
  const SessionOptions& options = p.options;
  const std::size_t total = options.shard    ? static_cast<std::size_t>(options.shard->plan_cases)
                            : options.resume ? p.cases.size() - options.resume->recorded.size()
                                             : p.cases.size();
  ProgressDisplay display(std::cerr, {.style = style});
  Session session(std::move(p.cases), std::move(p.options), ExecutorFactory{},
                  progress_callbacks(display, total, verb()));
  g_session = &session;
  g_stop_signals = 0;
  auto previous_int = std::signal(SIGINT, on_stop_signal);
  auto previous_term = std::signal(SIGTERM, on_stop_signal);
  SessionResult result = session.run();
  std::signal(SIGINT, previous_int);
  std::signal(SIGTERM, previous_term);
  g_session = nullptr;
  return result;
}

// Phase 6: the summary, the warnings and where the reports went; the exit code.
int report_outcome(const SessionResult& result, const std::filesystem::path& out,
                   const std::vector<CounterColumn>& columns, bool time_report_wanted,
                   const std::set<std::string>& measured_before) {
  switch (result.outcome) {
    case SessionOutcome::bad_input:
      std::cerr << verb() << ": " << result.message << "\n";
      return kExitBadInput;
    case SessionOutcome::no_gpu:
      std::cerr << no_gpu_message(g_verb, result.message) << "\n";
      return kExitNoGpu;
    case SessionOutcome::completed:
    case SessionOutcome::cancelled:
      break;
  }
  const Report& report = result.report;
  print_summary(std::cout, report, columns);
  // The L2 size the session judged the roofs with (its worker's), so the warnings read the same figures.
  const std::int64_t l2_bytes = report.run.device ? report.run.device->l2_bytes : 0;
  for (const auto& w : derive_warnings(report.cases, l2_bytes)) std::cerr << verb() << ": warning: " << w << "\n";
  for (const auto& e : result.write_errors) std::cerr << verb() << ": error: " << e << "\n";
  if (time_report_wanted) {
    auto stages = report.run.session_stages_s;
    stages.emplace_back("reports", result.reports_s);
    // A resumed run's report holds the cases measured before the interruption too: their stages
    // belong to another run's wall time.
    std::vector<CaseRecord> this_run;
    for (const CaseRecord& c : report.cases)
      if (!measured_before.contains(c.nvtx_range)) this_run.push_back(c);
    std::cout << "\n" << format_time_report(time_report(stages, this_run));
    if (!measured_before.empty())
      std::cout << fmt::format("  ({} cases measured before the interruption are left out)\n", measured_before.size());
  }
  if (result.write_errors.empty())
    std::cerr << fmt::format("{}: wrote {}, {} and {}\n", verb(), (out / "report.json").string(),
                             (out / "report.csv").string(), (out / "journal.jsonl").string());
  if (result.outcome == SessionOutcome::cancelled) {
    std::cerr << verb() << ": interrupted; the reports hold the " << report.cases.size()
              << " finished cases (a second Ctrl-C or SIGTERM abandons the case in flight)\n";
    return kExitInterrupted;
  }
  if (!result.write_errors.empty() || result.any_case_failed()) return kExitCaseFailed;
  return kExitOk;
}

}  // namespace

int run_from_flags(RunFlags f, const nlohmann::ordered_json& given_flags, const std::string& self_exe,
                   const std::string& command_line) {
  g_verb = f.verb;
  std::optional<ProgressStyle> progress;
  try {
    progress = parse_progress_flag("--progress", f.progress);
  } catch (const FlagError& e) {
    std::cerr << verb() << ": " << e.what() << "\n";
    return kExitBadInput;
  }
  std::optional<JournalContents> journal;
  if (!f.resume.empty())
    if (auto exit_code = take_journal_flags(f, journal)) return *exit_code;
  // A suite's plugins, before the suite is planned (the --plugin flags were loaded by the verb).
  if (!f.suite.empty() && !load_suite_plugins(verb(), f.suite)) return kExitBadInput;
  // Every input error is reported before any GPU work.
  RunPlan plan;
  try {
    plan = plan_from_flags(f, given_flags);
    if (journal)
      if (auto exit_code = resume_against(f, *journal, given_flags, plan)) return *exit_code;
  } catch (const std::invalid_argument& e) {  // SettingError, SuiteError, TuningError, FlagError, ResumeError
    std::cerr << verb() << ": " << (journal ? "--resume: " : "") << e.what() << "\n";
    return kExitBadInput;
  }
  if (auto exit_code = without_running(f, plan)) return *exit_code;
  plan.options.worker_exe = self_exe;
  plan.options.timer = f.timer;
  plan.options.out = std::filesystem::path(f.out);
  plan.options.command_line = command_line;
  // A cache folder that cannot be written costs the run its cache, said once here, never a case.
  if (auto warning = check_oracle_cache(plan.oracle_cache)) std::cerr << verb() << ": warning: " << *warning << "\n";
  plan.options.worker_environment = oracle_cache_environment(plan.oracle_cache);
  // The workers load the plugins this process loaded, in the same order ($KWB_PLUGINS).
  for (auto& variable : plugin_environment()) plan.options.worker_environment.push_back(std::move(variable));
  const std::vector<CounterColumn> columns = plan.columns;
  std::set<std::string> measured_before;
  if (plan.options.resume)
    for (const auto& [identity, _] : plan.options.resume->recorded) measured_before.insert(identity);
  return report_outcome(run_session(std::move(plan), choose_progress_style(progress)), f.out, columns, f.time_report,
                        measured_before);
}


void add_run_command(CLI::App& app, int& exit_code, const std::string& self_exe) {
  auto* cmd = app.add_subcommand("run", "Verify and time cases; write report.json, report.csv and a journal");
  static RunFlags f;
  cmd->add_option("--op,-o", f.ops, "Ops to run (default: all); see `kwb list`. Repeats count once")->delimiter(',');
  cmd->add_option("--variant,-v", f.variants, "Variants to run (default: all but test-only ones)")->delimiter(',');
  cmd->add_option("--dtype,-d", f.dtypes, "fp32, fp16, bf16 (default: all the op defines)")->delimiter(',');
  cmd->add_option("--axis,-a", f.axes,
                  "NAME=VALUES, one per axis: cols=4096 | cols=512,4100 | cols=1024:16384:x2 | "
                  "rows=1024:8192:+1024 (k and m suffixes: 16k). Axes not named take their "
                  "default; with no --axis each op runs its default shapes");
  cmd->add_option("--shapes", f.shapes,
                  "Shapes of ops whose axes --axis does not name: default (realistic sizes) or edge "
                  "(small and odd sizes at every axis's edges, for correctness checks)");
  cmd->add_option("--mode", f.mode, "cold (L2 flushed before every sample, default) or hot");
  cmd->add_option("--flush", f.flush, "Cold-mode L2 flush: dirty (memset, default) or clean (as Nsight Compute)");
  cmd->add_option("--launch", f.launch,
                  "stream (each sample launches the variant, default) or graph (one sample's launches captured in a "
                  "CUDA graph and replayed: no host launch gaps; a variant that cannot be captured is skipped)");
  cmd->add_option("--preset", f.preset,
                  "Stopping rule: quick, default or precise; verify checks every case and times none");
  cmd->add_option("--out", f.out, "Output folder (default: results)");
  auto* device = cmd->add_option("--device", f.device, "CUDA device index (default: 0)")->type_name("INT");
  cmd->add_option("--devices", f.devices,
                  "Spread the cases over several GPUs of this host, one worker each, into one report: all, or "
                  "indices such as 0,1. Each GPU takes the next case as it finishes one; the GPUs must be of "
                  "one kind")
      ->type_name("all|LIST")
      ->excludes(device);
  cmd->add_option("--seed", f.seed, "Seed of the input generator, 0 to 2^64-1 (default: 1)")->type_name("UINT");
  cmd->add_option("--timer", f.timer, "auto (CUPTI, else CUDA events), cupti or events");
  cmd->add_option("--case-timeout", f.case_timeout_s, "Watchdog per case, seconds (default: 120): the longest wait for a case's inputs and oracle, and again for its launches")->type_name("SECONDS");
  cmd->add_option("--max-cases", f.max_cases,
                  fmt::format("Refuse plans with more cases than this (default: {})", PlanRequest::kDefaultMaxCases))
      ->type_name("N");
  cmd->add_flag("--include-test-variants", f.include_test_variants, "Run test-only (faulting) variants too");
  cmd->add_flag("--datasheet-ceilings", f.datasheet_ceilings, "Use datasheet ceilings, measure none");
  cmd->add_option("--suite", f.suite,
                  "Plan from a suite file (suites/*.yaml); --op/--variant/--dtype narrow it, --mode/--flush/"
                  "--launch/--preset/--seed override it, --axis/--shapes are refused")
      ->type_name("FILE");
  cmd->add_option("--shard", f.shard,
                  "Run only slice I of N of the plan (counted from 0: 0/4 .. 3/4): the cases at plan positions k "
                  "with k mod N == I. Every host plans alike; `kwb merge` joins the shard reports")
      ->type_name("I/N");
  cmd->add_option("--tuning", f.tuning,
                  "A tune.json from `kwb tune` (repeatable): its variant runs with the best configuration of the "
                  "nearest tuned shape of the same dtype instead of its declared defaults (tunables named with "
                  "--axis keep their values); the file's GPU must be this one")
      ->type_name("FILE");
  cmd->add_option("--counters", f.counter_sets,
                  "Hardware counters per case, in replay passes of their own after timing (times never come "
                  "from them): memory, compute, tensor, occupancy (`kwb counters --list` shows their metrics "
                  "and passes)")
      ->delimiter(',')
      ->type_name("SET[,SET...]");
  cmd->add_option("--metrics", f.metrics,
                  "Extra counters by full name (dram__bytes_read.sum, ...), collected with --counters' sets; "
                  "checked against the GPU's chip before any case runs")
      ->delimiter(',')
      ->type_name("NAME[,NAME...]");
  cmd->add_option("--columns", f.columns,
                  "Add counter figures to the results table: traffic_ratio, dram_read, dram_write, l2_hit_rate, "
                  "l1_hit_rate, ld_sectors_per_request, issue_active, tensor_active, achieved_occupancy, waves, ... "
                  "(`kwb counters --list` explains each), or the full name of a metric the run collects; needs "
                  "--counters or --metrics")
      ->delimiter(',')
      ->type_name("NAME[,NAME...]");
  cmd->add_flag("--time-report", f.time_report,
                "After the summary, print where the run's time went: the session's stages (workers, ceilings, "
                "cases, reports) and the cases' (inputs, oracle, verify, timing, ...); report.json holds them "
                "either way");
  cmd->add_option("--progress", f.progress, kProgressFlagHelp)->type_name("bar|lines|none");
  cmd->add_option("--oracle-cache", f.oracle_cache,
                  "Where the fp64 oracles' answers are kept between runs (shared by every variant and later run; "
                  "`kwb cache show` and `kwb cache clear`), or off to compute every oracle. Default: "
                  "$KWB_ORACLE_CACHE, else the oracle folder of $KWB_CACHE_DIR, $XDG_CACHE_HOME/kwb or ~/.cache/kwb")
      ->type_name("DIR|off");
  cmd->add_option("--oracle-cache-max-bytes", f.oracle_cache_max_bytes,
                  "Bound of the oracle cache: answers unused for a week go first, then those saving the least "
                  "oracle time per byte (bytes, or 512M, 4G, ...; default: $KWB_CACHE_MAX_BYTES, else 16G)")
      ->type_name("SIZE");
  cmd->add_flag("--list-cases", f.list_cases, "Print the planned cases (one identity a line) and exit; needs no GPU");
  cmd->add_option("--resume", f.resume,
                  "Continue the interrupted sweep whose --out folder is DIR: re-plan from its journal, measure "
                  "only the cases not recorded there, write the reports from all of them (plan flags given now "
                  "must match the journal's; another GPU is refused)")
      ->type_name("DIR");
  cmd->add_flag("--no-measure", f.no_measure,
                "With --resume: write report.json/csv from the journal alone (marked incomplete when cases "
                "are missing); needs no GPU");
  static std::vector<std::string> plugins;
  add_plugin_option(cmd, plugins);
  cmd->callback([cmd, &exit_code, self_exe] {
    if (!load_plugin_flags("kwb run", plugins)) {
      exit_code = kExitBadInput;
      return;
    }
    if (f.no_measure && f.resume.empty()) {
      std::cerr << "kwb run: --no-measure: only with --resume DIR (the reports of a journal)\n";
      exit_code = kExitBadInput;
      return;
    }
    if (!f.resume.empty() && (cmd->count("--out") > 0 || f.list_cases)) {
      std::cerr << "kwb run: --resume: the reports go to the resumed folder; leave out --out and --list-cases\n";
      exit_code = kExitBadInput;
      return;
    }
    f.given = {.axis = cmd->count("--axis") > 0, .shapes = cmd->count("--shapes") > 0,
               .mode = cmd->count("--mode") > 0, .flush = cmd->count("--flush") > 0,
               .preset = cmd->count("--preset") > 0, .seed = cmd->count("--seed") > 0,
               .launch = cmd->count("--launch") > 0};
    exit_code = run_from_flags(f, given_plan_flags(*cmd, f), self_exe, invoked_command_line());
  });
}

}  // namespace kwb::cli
