// `kwb run`: plan the cases, measure them in a worker, journal each one, write the reports.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/run_output.hpp"
#include "derive/ceilings.hpp"
#include "derive/derive.hpp"
#include "plan/planner.hpp"
#include "measure/stats.hpp"
#include "session/supervisor.hpp"
#include "record/version.hpp"
#include "sinks/csv_report.hpp"
#include "sinks/journal.hpp"
#include "sinks/json_report.hpp"

namespace kwb::cli {
namespace {

std::atomic<bool> g_interrupted{false};
void on_sigint(int) { g_interrupted = true; }

struct RunFlags {
  std::vector<std::string> ops, variants, dtypes, axes;
  std::string mode = "cold", flush = "dirty", preset = "default", out = "results", timer = "auto";
  int device = 0;
  std::uint64_t seed = 1;
  double case_timeout_s = 120;
  bool include_test_variants = false;
  bool datasheet_ceilings = false;
};

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

// Flags -> plan; throws PlanError / AxisParseError with a message fit for the user.
PlanRequest to_plan_request(const RunFlags& f) {
  PlanRequest r;
  r.ops = f.ops;
  r.variants = f.variants;
  for (const auto& d : f.dtypes) {
    auto dtype = parse_dtype(d);
    if (!dtype) throw PlanError("--dtype: unknown dtype '" + d + "'; use fp32, fp16 or bf16");
    r.dtypes.push_back(*dtype);
  }
  for (const auto& a : f.axes) {
    try {
      r.axes.push_back(parse_axis_assignment(a));
    } catch (const AxisParseError& e) {
      throw PlanError(std::string("--axis: ") + e.what());
    }
  }
  const auto mode = parse_mode(f.mode);
  if (!mode) throw PlanError("--mode: unknown mode '" + f.mode + "'; use cold (L2 flushed before every sample) or hot");
  r.mode = *mode;
  r.flush = parse_flush_flag(f.flush, r.mode);
  if (!stopping_preset(f.preset)) throw PlanError("--preset: unknown preset '" + f.preset + "'; use quick, default or precise");
  r.preset = f.preset;
  r.seed = f.seed;
  r.include_test_variants = f.include_test_variants;
  return r;
}

int run(const RunFlags& f, const std::string& self_exe, const std::string& command_line) {
  // 1. Plan: every input error is reported before any GPU work.
  std::vector<CaseRequest> cases;
  PlanRequest plan;
  try {
    plan = to_plan_request(f);
    cases = plan_cases(plan, Registry::instance());
  } catch (const PlanError& e) {
    std::cerr << "kwb run: " << e.what() << "\n";
    return kExitBadInput;
  }
  if (cases.empty()) {
    std::cerr << "kwb run: the filters select no case (check --op, --variant and --dtype against `kwb list`)\n";
    return kExitBadInput;
  }
  const std::filesystem::path out = f.out;
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) {
    std::cerr << "kwb run: cannot create the output folder '" << out.string() << "': " << ec.message()
              << "; pass a writable folder with --out\n";
    return kExitBadInput;
  }

  // 2. The worker and its device.
  Supervisor supervisor({self_exe, f.device, f.timer, f.case_timeout_s, out / "worker.log"});
  const WorkerHello hello = supervisor.start();
  if (!hello.has_gpu) {
    std::cerr << no_gpu_message("run", hello.no_gpu_reason) << "\n";
    return kExitNoGpu;
  }
  if (auto problem = check_cases_fit(cases, Registry::instance(), double(hello.device.global_mem_bytes), hello.device.name)) {
    std::cerr << "kwb run: " << *problem << "\n";
    return kExitBadInput;
  }
  if (!hello.timer_note.empty()) std::cerr << "kwb run: note: " << hello.timer_note << "\n";

  // 3. Ceilings: cached per device and driver, measured once, datasheet as the labelled fallback.
  Report report;
  report.run.tool_version = kToolVersion;
  report.run.git_sha = kGitSha;
  report.run.command_line = command_line;
  report.run.host = hostname();
  report.run.started_at = now_utc();
  report.run.device = hello.device;
  report.run.datasheet_ceilings = datasheet_ceilings(hello.device);
  std::optional<Ceilings> measured;
  if (!f.datasheet_ceilings) {
    measured = load_cached_ceilings(hello.device);
    if (!measured) {
      std::cerr << "kwb run: measuring this GPU's ceilings (once per device and driver; `kwb ceilings` shows them)...\n";
      std::string error;
      measured = supervisor.measure_ceilings(&error);
      if (measured) save_cached_ceilings(hello.device, *measured);
      else std::cerr << "kwb run: could not measure ceilings (" << error << "); using the datasheet\n";
    }
  }
  report.run.ceilings = measured ? *measured : *report.run.datasheet_ceilings;
  report.run.settings = {{"mode", f.mode}, {"preset", f.preset}, {"seed", std::to_string(f.seed)},
                         {"timer", hello.timer}, {"case_timeout_s", fmt::format("{}", f.case_timeout_s)},
                         {"cases_planned", std::to_string(cases.size())}};
  if (!hello.timer_note.empty()) report.run.settings["timer_note"] = hello.timer_note;
  if (f.mode == "cold")
    report.run.settings["l2_flush"] = describe_flush(plan.flush, hello.device.l2_bytes);

  // 4. Cases: each record is journaled the moment it arrives.
  std::filesystem::remove(out / "journal.jsonl", ec);  // one journal per run
  Journal journal(out / "journal.jsonl");
  g_interrupted = false;
  auto previous = std::signal(SIGINT, on_sigint);
  std::cerr << fmt::format("kwb run: {} cases on {} ({}), timer {}, mode {}, preset {}\n", cases.size(),
                           hello.device.name, hello.device.uuid, hello.timer, f.mode, f.preset);
  for (const auto& c : cases) {
    if (g_interrupted) break;
    CaseRecord rec;
    try {
      rec = supervisor.run_case(c);
    } catch (const std::exception& e) {  // a bug of ours must not cost the cases already measured
      rec = record_for(c);
      rec.disposition = Disposition::failed;
      rec.reason = std::string("internal error while running the case: ") + e.what();
    }
    rec.repro = repro_command(c);
    if (const Variant* v = Registry::instance().find_variant(c.op, c.variant)) rec.role = v->role;
    derive_metrics(rec, Registry::instance(), *report.run.ceilings);
    journal.append(rec);
    print_progress(std::cerr, rec, cases.size());
    report.cases.push_back(std::move(rec));
  }
  std::signal(SIGINT, previous);

  // 5. Reports, atomically; interrupted runs still get theirs, marked incomplete.
  derive_speedups(report.cases);
  report.run.complete = !g_interrupted;
  report.run.finished_at = now_utc();
  report.run.settings["worker_restarts"] = std::to_string(supervisor.worker_restarts());
  write_report_json(out / "report.json", report);
  write_report_csv(out / "report.csv", report);
  print_summary(std::cout, report);
  for (const auto& w : derive_warnings(report.cases)) std::cerr << "kwb run: warning: " << w << "\n";
  std::cerr << fmt::format("kwb run: wrote {}, {} and {}\n", (out / "report.json").string(),
                           (out / "report.csv").string(), (out / "journal.jsonl").string());
  if (g_interrupted) {
    std::cerr << "kwb run: interrupted; the reports hold the " << report.cases.size() << " finished cases\n";
    return kExitInterrupted;
  }
  for (const auto& r : report.cases)
    if (r.disposition == Disposition::failed) return kExitCaseFailed;
  return kExitOk;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code, const std::string& self_exe) {
  auto* cmd = app.add_subcommand("run", "Verify and time cases; write report.json, report.csv and a journal");
  static RunFlags f;
  cmd->add_option("--op,-o", f.ops, "Ops to run (default: all); see `kwb list`")->delimiter(',');
  cmd->add_option("--variant,-v", f.variants, "Variants to run (default: all but test-only ones)")->delimiter(',');
  cmd->add_option("--dtype,-d", f.dtypes, "fp32, fp16, bf16 (default: all the op defines)")->delimiter(',');
  cmd->add_option("--axis,-a", f.axes,
                  "NAME=VALUES, repeatable: cols=4096 | cols=512,4100 | cols=1024:16384:x2 | "
                  "rows=1024:8192:+1024 (k and m suffixes: 16k). Axes not named take their "
                  "default; with no --axis each op runs its default shapes");
  cmd->add_option("--mode", f.mode, "cold (L2 flushed before every sample, default) or hot");
  cmd->add_option("--flush", f.flush, "Cold-mode L2 flush: dirty (memset, default) or clean (as Nsight Compute)");
  cmd->add_option("--preset", f.preset, "Stopping rule: quick, default or precise");
  cmd->add_option("--out", f.out, "Output folder (default: results)");
  cmd->add_option("--device", f.device, "CUDA device index (default: 0)");
  cmd->add_option("--seed", f.seed, "Seed of the input generator (default: 1)");
  cmd->add_option("--timer", f.timer, "auto (CUPTI, else CUDA events), cupti or events");
  cmd->add_option("--case-timeout", f.case_timeout_s, "Watchdog per case, seconds (default: 120)");
  cmd->add_flag("--include-test-variants", f.include_test_variants, "Run test-only (faulting) variants too");
  cmd->add_flag("--datasheet-ceilings", f.datasheet_ceilings, "Use datasheet ceilings, measure none");
  cmd->callback([&exit_code, self_exe] { exit_code = run(f, self_exe, invoked_command_line()); });
}

}  // namespace kwb::cli
