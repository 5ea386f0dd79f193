// `kwb run`: flags -> plan -> Session; prints each case as it finishes and the summary.
#include <atomic>
#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/flag_values.hpp"
#include "cli/run_output.hpp"
#include "cli/run_suite.hpp"
#include "derive/derive.hpp"
#include "plan/planner.hpp"
#include "plan/shard.hpp"
#include "measure/stats.hpp"
#include "session/session.hpp"

namespace kwb::cli {
namespace {

// The flags as written. Numbers are kept as text and parsed by flag_values, so that a negative
// or overflowing value gets a message instead of a wrap-around.
struct RunFlags {
  std::vector<std::string> ops, variants, dtypes, axes;
  std::string mode = "cold", flush = "dirty", preset = "default", out = "results", timer = "auto";
  std::string shapes = "default";
  std::string device = "0", seed = "1", case_timeout_s = "120";
  std::string max_cases = std::to_string(PlanRequest::kDefaultMaxCases);
  bool include_test_variants = false;
  bool datasheet_ceilings = false;
  std::string suite;        // --suite FILE: the plan comes from a suite file
  std::string shard;        // --shard I/N: only plan positions k with k mod N == I
  bool list_cases = false;  // print the plan and exit, no GPU
  GivenRunFlags given;      // which flags were written out (a suite's values yield to them)
};

// Every planned case is held in memory with its shape: a million is about 0.5 GB.
constexpr std::size_t kMaxCasesCeiling = 1'000'000;

// Flags -> plan request; throws PlanError (and FlagError) with a message fit for the user.
PlanRequest to_plan_request(const RunFlags& f) {
  PlanRequest r;
  r.ops = without_repeats(f.ops);
  r.variants = without_repeats(f.variants);
  for (const auto& d : without_repeats(f.dtypes)) {
    auto dtype = parse_dtype(d);
    if (!dtype) throw PlanError("--dtype: unknown dtype '" + d + "'; use fp32, fp16 or bf16");
    r.dtypes.push_back(*dtype);
  }
  for (const auto& a : f.axes) {
    try {
      r.axes.push_back(parse_axis_for(a, Registry::instance()));
    } catch (const AxisParseError& e) {
      throw PlanError(std::string("--axis: ") + e.what());
    }
  }
  if (f.shapes == "edge") r.shape_set = ShapeSet::edge;
  else if (f.shapes != "default")
    throw PlanError("--shapes: unknown set '" + f.shapes + "'; use default (realistic sizes) or edge (small, odd sizes)");
  const auto mode = parse_mode(f.mode);
  if (!mode) throw PlanError("--mode: unknown mode '" + f.mode + "'; use cold (L2 flushed before every sample) or hot");
  r.mode = *mode;
  r.flush = parse_flush_flag(f.flush, r.mode);
  if (!stopping_preset(f.preset) && f.preset != kVerifyOnlyPreset)
    throw PlanError("--preset: unknown preset '" + f.preset + "'; use quick, default or precise (or verify: check, do not time)");
  r.preset = f.preset;
  r.seed = parse_seed("--seed", f.seed);
  r.max_cases = parse_positive_count("--max-cases", f.max_cases);
  if (r.max_cases > kMaxCasesCeiling)
    throw PlanError(fmt::format("--max-cases: {} is more than one run can plan (at most {}); split the sweep "
                                "into several runs with narrower --axis ranges",
                                r.max_cases, kMaxCasesCeiling));
  r.include_test_variants = f.include_test_variants;
  return r;
}

// Ctrl-C: the case in flight finishes, then the run stops and writes its reports. A second
// Ctrl-C abandons the case in flight (a long or hung case): its worker is ended at once.
Session* g_session = nullptr;
std::atomic<int> g_sigints{0};
void on_sigint(int) {
  if (Session* s = g_session)
    s->cancel(g_sigints++ == 0 ? CancelMode::finish_current : CancelMode::abandon_current);
}

int run(const RunFlags& f, const std::string& self_exe, const std::string& command_line) {
  // 1. Flags and plan: every input error is reported before any GPU work.
  std::vector<CaseRequest> cases;
  SessionOptions options;
  options.ceilings = f.datasheet_ceilings ? CeilingsChoice::datasheet : CeilingsChoice::cached_or_measured;
  try {
    const PlanRequest request = to_plan_request(f);
    if (f.suite.empty()) {
      cases = plan_cases(request, Registry::instance());
    } else {
      SuiteRun suite = plan_suite_run(f.suite, request, f.given);
      cases = std::move(suite.cases);
      options.suite = std::move(suite.info);
      options.ceilings = suite.ceilings;
    }
    if (!f.shard.empty()) {  // the whole plan is made on every host, then sliced the same way
      const ShardSpec spec = parse_shard("--shard", f.shard);
      options.shard = ShardInfo{spec.index, spec.count, static_cast<std::int64_t>(cases.size()), plan_digest(cases)};
      cases = select_shard(cases, spec);
    }
    check_choice("--timer", f.timer, {"auto", "cupti", "events"});
    options.device = parse_device_index("--device", f.device);
    options.case_timeout_s = parse_positive_seconds("--case-timeout", f.case_timeout_s);
  } catch (const std::invalid_argument& e) {  // PlanError, FlagError, SuiteError
    std::cerr << "kwb run: " << e.what() << "\n";
    return kExitBadInput;
  }
  if (cases.empty() && options.shard) {  // more shards than cases: this one has nothing to do
    std::cerr << fmt::format("kwb run: shard {}/{} of a plan of {} cases holds no case; nothing run, no report "
                             "written (kwb merge does not expect one)\n",
                             options.shard->index, options.shard->count, options.shard->plan_cases);
    return kExitOk;
  }
  if (cases.empty()) {
    std::cerr << "kwb run: the filters select no case (check --op, --variant and --dtype against `kwb list`)\n";
    return kExitBadInput;
  }
  if (f.list_cases) {  // the plan, one case identity a line (the NVTX range name), and nothing run
    for (const auto& c : cases) std::cout << case_identity(c) << "\n";
    const std::string slice = options.shard ? fmt::format(" in shard {}/{} (of {} in the plan, digest {})",
                                                          options.shard->index, options.shard->count,
                                                          options.shard->plan_cases, options.shard->plan_digest)
                                            : "";
    std::cerr << fmt::format("kwb run: {} cases planned{}{}, mode {}, preset {}; nothing run (--list-cases)\n",
                             cases.size(), slice, options.suite ? " by suite '" + options.suite->name + "'" : "",
                             to_string(cases.front().mode), cases.front().preset);
    return kExitOk;
  }
  if (f.out.empty()) {
    std::cerr << "kwb run: --out: the folder name is empty; pass a folder for the reports, e.g. --out results\n";
    return kExitBadInput;
  }
  options.worker_exe = self_exe;
  options.timer = f.timer;
  options.out = std::filesystem::path(f.out);
  options.command_line = command_line;

  // 2. The session: records are journaled by it and printed here as they arrive.
  // Sharded cases keep their plan position as index: progress counts against the whole plan.
  const std::size_t total = options.shard ? static_cast<std::size_t>(options.shard->plan_cases) : cases.size();
  SessionCallbacks callbacks;
  callbacks.on_record = [total](const CaseRecord& rec, const SessionProgress&) { print_progress(std::cerr, rec, total); };
  callbacks.on_note = [](const std::string& note) { std::cerr << "kwb run: " << note << "\n"; };
  Session session(std::move(cases), options, nullptr, callbacks);
  g_session = &session;
  g_sigints = 0;
  auto previous = std::signal(SIGINT, on_sigint);
  SessionResult result = session.run();
  std::signal(SIGINT, previous);
  g_session = nullptr;

  switch (result.outcome) {
    case SessionOutcome::bad_input:
      std::cerr << "kwb run: " << result.message << "\n";
      return kExitBadInput;
    case SessionOutcome::no_gpu:
      std::cerr << no_gpu_message("run", result.message) << "\n";
      return kExitNoGpu;
    case SessionOutcome::completed:
    case SessionOutcome::cancelled:
      break;
  }

  // 3. Summary.
  const Report& report = result.report;
  const std::filesystem::path out = *options.out;
  print_summary(std::cout, report);
  for (const auto& w : derive_warnings(report.cases)) std::cerr << "kwb run: warning: " << w << "\n";
  for (const auto& e : result.write_errors) std::cerr << "kwb run: error: " << e << "\n";
  if (result.write_errors.empty())
    std::cerr << fmt::format("kwb run: wrote {}, {} and {}\n", (out / "report.json").string(),
                             (out / "report.csv").string(), (out / "journal.jsonl").string());
  if (result.outcome == SessionOutcome::cancelled) {
    std::cerr << "kwb run: interrupted; the reports hold the " << report.cases.size()
              << " finished cases (a second Ctrl-C abandons the case in flight)\n";
    return kExitInterrupted;
  }
  if (!result.write_errors.empty() || result.any_case_failed()) return kExitCaseFailed;
  return kExitOk;
}

}  // namespace

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
  cmd->add_option("--preset", f.preset,
                  "Stopping rule: quick, default or precise; verify checks every case and times none");
  cmd->add_option("--out", f.out, "Output folder (default: results)");
  cmd->add_option("--device", f.device, "CUDA device index (default: 0)")->type_name("INT");
  cmd->add_option("--seed", f.seed, "Seed of the input generator, 0 to 2^64-1 (default: 1)")->type_name("UINT");
  cmd->add_option("--timer", f.timer, "auto (CUPTI, else CUDA events), cupti or events");
  cmd->add_option("--case-timeout", f.case_timeout_s, "Watchdog per case, seconds (default: 120)")->type_name("SECONDS");
  cmd->add_option("--max-cases", f.max_cases,
                  fmt::format("Refuse plans with more cases than this (default: {})", PlanRequest::kDefaultMaxCases))
      ->type_name("N");
  cmd->add_flag("--include-test-variants", f.include_test_variants, "Run test-only (faulting) variants too");
  cmd->add_flag("--datasheet-ceilings", f.datasheet_ceilings, "Use datasheet ceilings, measure none");
  cmd->add_option("--suite", f.suite,
                  "Plan from a suite file (suites/*.yaml); --op/--variant/--dtype narrow it, --mode/--flush/"
                  "--preset/--seed override it, --axis/--shapes are refused")
      ->type_name("FILE");
  cmd->add_option("--shard", f.shard,
                  "Run only slice I of N of the plan (counted from 0: 0/4 .. 3/4): the cases at plan positions k "
                  "with k mod N == I. Every host plans alike; `kwb merge` joins the shard reports")
      ->type_name("I/N");
  cmd->add_flag("--list-cases", f.list_cases, "Print the planned cases (one identity a line) and exit; needs no GPU");
  cmd->callback([cmd, &exit_code, self_exe] {
    f.given = {.axis = cmd->count("--axis") > 0, .shapes = cmd->count("--shapes") > 0,
               .mode = cmd->count("--mode") > 0, .flush = cmd->count("--flush") > 0,
               .preset = cmd->count("--preset") > 0, .seed = cmd->count("--seed") > 0,
               .datasheet_ceilings = f.datasheet_ceilings};
    exit_code = run(f, self_exe, invoked_command_line());
  });
}

}  // namespace kwb::cli
