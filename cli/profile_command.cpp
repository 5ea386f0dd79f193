// `kwb profile CASE`: the Nsight Compute command that profiles one case alone through kwb's
// worker (reports/profile/ncu_command.hpp), printed; with --run, run where ncu is installed and
// its CSV imported into the case's record (CaseRecord::ncu_counters); with --import, a CSV made
// elsewhere imported. CASE is a case identity (a record's nvtx_range) or a repro line, quoted
// whole or after `--`.
//
//   kwb profile 'rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096' [--report R] [--counters memory] [--kernels N]
//   kwb profile CASE --run [--report R] [--out DIR] [--ncu PATH]
//   kwb profile --import FILE.csv --report R --case CASE
//
// Exit codes: 0 done; 1 ncu ran but gave no usable table (its log says why), or it (or the run
// under it) failed, whatever figures it gave being written; 2 bad input (the case, a flag, the
// report, the CSV) or no ncu to run.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/flag_values.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/plan/counter_sets.hpp"
#include "harness/plan/planner.hpp"
#include "harness/record/atomic_file.hpp"
#include "harness/record/json_report.hpp"
#include "reports/profile/counter_comparison.hpp"
#include "reports/profile/ncu_command.hpp"
#include "reports/profile/ncu_csv.hpp"
#include "reports/profile/ncu_record.hpp"
#include "reports/profile/profile_case.hpp"
#include "harness/record/shell_words.hpp"

namespace kwb::cli {
namespace {

struct ProfileFlags {
  std::vector<std::string> words;  // the positional CASE (an identity, or a repro line's words)
  std::string case_flag;           // --case (with --import)
  std::string report, import_csv, out = "results", ncu, kernels;
  bool run = false;
  std::vector<std::string> counter_sets, metrics;
};

// The case and everything the command needs, as the flags and the report give them.
struct ProfileTarget {
  CaseRequest request;
  std::string identity;
  std::optional<Report> report;
  std::optional<CaseRecord> record;  // the case in the report
  std::vector<std::string> sets, metrics;
  std::string metrics_from;
  int kernels = 1;
  std::string kernels_from;
};

std::string case_text(const ProfileFlags& f) {
  if (!f.words.empty() && !f.case_flag.empty())
    throw FlagError("give the case once: as CASE or with --case, not both");
  if (!f.case_flag.empty()) return f.case_flag;
  if (f.words.empty())
    throw FlagError("which case? give its identity (a record's nvtx_range, e.g. rmsnorm_fwd:fused_v2_vec16:bf16:"
                    "16384x4096) or its repro line in quotes ('kwb run --op ... --variant ...')");
  if (f.words.size() == 1) return f.words.front();
  return shell_join(f.words);  // a repro line given unquoted after `--`
}

// Phase 1: the case, the report's record of it, the metrics and the kernels per launch.
ProfileTarget resolve_target(const ProfileFlags& f) {
  const Registry& registry = Registry::instance();
  const std::string text = case_text(f);
  ProfileTarget t;
  t.request = resolve_profile_case(text, registry);
  t.identity = case_identity(t.request);
  if (!f.report.empty()) {
    t.report = read_report_json(f.report);
    t.record = find_case(*t.report, t.identity, f.report);
    // An identity says nothing of mode and seed: the report's repro line of the case does.
    if (!is_repro_line(text)) t.request = case_as_recorded(*t.record, t.request, registry);
  }
  if (!f.counter_sets.empty() || !f.metrics.empty()) {
    const CounterRequest asked = parse_counter_request(f.counter_sets, f.metrics);
    t.sets = asked.sets;
    t.metrics = asked.metrics;
    t.metrics_from = "--counters/--metrics";
  } else if (t.record && t.record->counters && !t.record->counters->metrics.empty()) {
    t.sets = t.record->counters->sets;
    t.metrics = t.record->counters->metrics;
    t.metrics_from = "the metrics kwb collected for the case in the report";
  } else if (!t.request.counter_metrics.empty()) {
    t.sets = t.request.counter_sets;
    t.metrics = t.request.counter_metrics;
    t.metrics_from = "the repro line's --counters/--metrics";
  } else {
    const CounterRequest memory = parse_counter_request({"memory"}, {});
    t.sets = memory.sets;
    t.metrics = memory.metrics;
    t.metrics_from = "the memory set (the default; --counters/--metrics name others)";
  }
  const int recorded = t.record ? kernels_per_launch(*t.record) : 0;
  if (!f.kernels.empty()) {
    t.kernels = static_cast<int>(parse_positive_count("--kernels", f.kernels));
    t.kernels_from = "--kernels";
    if (recorded && recorded != t.kernels)
      std::cerr << fmt::format("kwb profile: warning: --kernels {} where the report's record of the case counted {} "
                               "kernels per launch\n",
                               t.kernels, recorded);
  } else if (recorded) {
    t.kernels = recorded;
    t.kernels_from = "the report's record of the case";
  } else {
    t.kernels = 1;
    t.kernels_from = t.record ? "1, the default: the report's record does not count the case's kernels (timed with "
                                "CUDA events); pass --kernels N for a variant that launches N"
                              : "1, the default: pass --kernels N for a variant that launches N, or --report with a "
                                "report that timed the case";
  }
  return t;
}

std::filesystem::path run_out_of(const ProfileFlags& f, const ProfileTarget& t) {
  return std::filesystem::path(f.out) / (ncu_file_stem(t.identity) + "-run");
}
std::filesystem::path csv_of(const ProfileFlags& f, const ProfileTarget& t) {
  return std::filesystem::path(f.out) / (ncu_file_stem(t.identity) + ".csv");
}

// An executable `name` (a path, or a name looked up on PATH); nullopt when there is none.
std::optional<std::string> find_program(const std::string& name) {
  auto executable = [](const std::string& p) {
    struct stat st{};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) return executable(name) ? std::optional(name) : std::nullopt;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && executable(dir + "/" + name)) return dir + "/" + name;
  return std::nullopt;
}

// Runs argv with stdout to `out_file` and stderr to `log_file`; its exit status, or a message.
int run_to_files(const std::vector<std::string>& argv, const std::filesystem::path& out_file,
                 const std::filesystem::path& log_file, std::string* problem) {
  const int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int log = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0 || log < 0) {
    *problem = fmt::format("cannot write {}: {}", (out < 0 ? out_file : log_file).string(), std::strerror(errno));
    if (out >= 0) ::close(out);
    if (log >= 0) ::close(log);
    return -1;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out, 1);
  posix_spawn_file_actions_adddup2(&actions, log, 2);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out);
  ::close(log);
  if (spawned != 0) {
    *problem = fmt::format("cannot start {}: {}", argv[0], std::strerror(spawned));
    return -1;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      *problem = fmt::format("waiting for {}: {}", argv[0], std::strerror(errno));
      return -1;
    }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string last_lines(const std::filesystem::path& file, int count) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  for (std::size_t i = lines.size() > static_cast<std::size_t>(count) ? lines.size() - count : 0; i < lines.size(); ++i)
    out += "    " + lines[i] + "\n";
  return out.empty() ? "    (it printed nothing)\n" : out;
}

// Phase 3: the CSV into counters, with how they were taken; warnings printed.
CaseCounters import_csv(const std::filesystem::path& csv, const ProfileTarget& t, const std::string& how) {
  const NcuRawTable table = parse_ncu_raw_csv(read_text_file(csv));
  std::vector<std::string> warnings;
  CaseCounters counters = counters_from_ncu_table(table, t.metrics, &warnings);
  counters.sets = t.sets;
  if (t.report && t.report->run.device) counters.chip = t.report->run.device->chip;
  counters.note = how + "; imported from " + csv.string();
  for (const std::string& w : warnings) {
    std::cerr << "kwb profile: warning: " << w << "\n";
    counters.note += "; " + w;
  }
  if (static_cast<int>(counters.kernels.size()) != t.kernels)
    std::cerr << fmt::format("kwb profile: warning: ncu's table holds {} kernels where {} were asked for ({})\n",
                             counters.kernels.size(), t.kernels, t.kernels_from);
  return counters;
}

// Phase 4: the counters into the record, and kwb's beside ncu's.
void write_and_show(const ProfileFlags& f, const ProfileTarget& t, const CaseCounters& counters,
                    const std::filesystem::path& inner_report) {
  std::filesystem::path written;
  if (!f.report.empty()) {
    write_ncu_counters_into_report(f.report, t.identity, counters);
    written = f.report;
  } else {
    written = std::filesystem::path(f.out) / (ncu_file_stem(t.identity) + ".json");
    write_ncu_record(written, read_report_json(inner_report), t.identity, counters, inner_report.string());
  }
  const CaseCounters* own = t.record && t.record->counters && t.record->counters->unavailable.empty()
                                ? &*t.record->counters
                                : nullptr;
  std::cout << fmt::format("\n{}: {} kernel{}, kwb's counters (totals over the launch) beside ncu's\n", t.identity,
                           counters.kernels.size(), counters.kernels.size() == 1 ? "" : "s");
  std::cout << comparison_table(compare_counters(own, counters));
  if (!own) std::cout << "(kwb's own column is empty: the case has no counters of its own in "
                      << (f.report.empty() ? "the run made under ncu" : f.report)
                      << "; `kwb run --counters ...` collects them)\n";
  std::cerr << fmt::format("kwb profile: wrote ncu's figures into {} (the case's ncu_counters)\n", written.string());
}

int profile(const ProfileFlags& f, const std::string& self_exe) {
  if (f.run && !f.import_csv.empty()) throw FlagError("--run and --import: give one (run ncu here, or import its CSV)");
  if (!f.import_csv.empty() && f.report.empty())
    throw FlagError("--import needs --report R: the report whose case gets ncu's figures");
  const ProfileTarget t = resolve_target(f);
  NcuCommandSettings settings;
  settings.ncu = f.ncu.empty() ? "ncu" : f.ncu;
  settings.kwb = self_exe;
  settings.run_out = run_out_of(f, t).string();
  settings.metrics = t.metrics;
  settings.kernels_per_launch = t.kernels;
  const NcuCommand cmd = build_ncu_command(t.request, settings);
  std::cerr << fmt::format("kwb profile: {} ({} mode; metrics: {}; kernels per launch: {}, from {})\n", t.identity,
                           to_string(t.request.mode), t.metrics_from, t.kernels, t.kernels_from);

  if (!f.import_csv.empty()) {
    const CaseCounters counters = import_csv(
        f.import_csv, t,
        fmt::format("Nsight Compute CSV made elsewhere: its cache and clock control are those of the command that "
                    "made it (for this case kwb profile prints --cache-control {} --clock-control none)",
                    cmd.cache_control));
    write_and_show(f, t, counters, {});
    return kExitOk;
  }
  const std::string printed = shell_join(cmd.argv) + " > " + shell_quote(csv_of(f, t).string());
  const std::string import_line =
      fmt::format("kwb profile --import {} --report {} --case {}", shell_quote(csv_of(f, t).string()),
                  f.report.empty() ? std::string("REPORT.json") : shell_quote(f.report), shell_quote(t.identity));
  if (!f.run) {
    std::cout << printed << "\n";
    std::cerr << fmt::format("kwb profile: {}.\nThen import its figures: {}\n(or run it here with --run)\n", cmd.note,
                             import_line);
    return kExitOk;
  }
  const auto ncu = find_program(settings.ncu);
  if (!ncu) {
    std::cerr << fmt::format("kwb profile: --run: there is no '{}' to run here ({}); run this command where Nsight "
                             "Compute is installed (the GPU machine):\n  {}\nthen import its CSV: {}\n",
                             settings.ncu, f.ncu.empty() ? "not on PATH; --ncu PATH names one" : "--ncu", printed,
                             import_line);
    return kExitBadInput;
  }
  NcuCommand to_run = cmd;
  to_run.argv.front() = *ncu;
  std::filesystem::create_directories(f.out);
  const std::filesystem::path csv = csv_of(f, t), log = std::filesystem::path(f.out) / (ncu_file_stem(t.identity) + ".log");
  std::cerr << "kwb profile: running " << shell_join(to_run.argv) << "\n";
  std::string problem;
  const int status = run_to_files(to_run.argv, csv, log, &problem);
  if (status < 0) {
    std::cerr << "kwb profile: --run: " << problem << "\n";
    return kExitCaseFailed;
  }
  CaseCounters counters;
  try {
    counters = import_csv(csv, t, cmd.note);
  } catch (const NcuCsvError& e) {
    std::cerr << fmt::format("kwb profile: ncu exited with {} and its output {} gives no figures: {}\nthe last lines "
                             "of its log {}:\n{}",
                             status, csv.string(), e.what(), log.string(), last_lines(log, 12));
    return kExitCaseFailed;
  }
  if (status != 0)
    std::cerr << fmt::format("kwb profile: ncu exited with {} (the run under it failed its case, or ncu reported an "
                             "error: its log {} and the run's report in {} say which); the figures it gave are "
                             "written all the same\n",
                             status, log.string(), run_out_of(f, t).string());
  try {
    write_and_show(f, t, counters, run_out_of(f, t) / "report.json");
  } catch (const ReportError& e) {  // the run under ncu wrote no report to take the record from
    std::cerr << fmt::format("kwb profile: the run under ncu left no record of the case ({}); its log {}:\n{}",
                             e.what(), log.string(), last_lines(log, 12));
    return kExitCaseFailed;
  }
  return status == 0 ? kExitOk : kExitCaseFailed;
}

}  // namespace

void add_profile_command(CLI::App& app, int& exit_code, const std::string& self_exe) {
  auto* cmd = app.add_subcommand(
      "profile", "Hand one case to Nsight Compute: print the ncu command that profiles it alone; with --run, run it "
                 "and import ncu's counters into the case's record");
  static ProfileFlags f;
  cmd->add_option("target", f.words,
                  "The case: its identity (op:variant:dtype:shape[:tunables], a record's nvtx_range) or its repro "
                  "line ('kwb run --op ... --variant ...', quoted, or unquoted after --)")
      ->type_name("CASE");
  cmd->add_option("--case", f.case_flag, "The case, as CASE (for --import)")->type_name("CASE");
  cmd->add_option("--report", f.report,
                  "A report holding the case: its mode, seed, kernels per launch and counters are taken from it, "
                  "and ncu's figures are written into it (atomically)")
      ->type_name("REPORT.json");
  cmd->add_flag("--run", f.run, "Run the command here (ncu must be installed) and import its CSV");
  cmd->add_option("--import", f.import_csv, "Import the CSV of a run of the printed command made elsewhere")
      ->type_name("FILE.csv");
  cmd->add_option("--counters", f.counter_sets,
                  "Metric sets for ncu to collect, as kwb run --counters takes them (default: the case's own "
                  "counters in --report, else memory)")
      ->delimiter(',')
      ->type_name("SET[,SET...]");
  cmd->add_option("--metrics", f.metrics, "Metrics for ncu to collect by full name, as kwb run --metrics")
      ->delimiter(',')
      ->type_name("NAME[,NAME...]");
  cmd->add_option("--kernels", f.kernels,
                  "Kernels the variant launches per launch (default: the report's count, else 1)")
      ->type_name("N");
  cmd->add_option("--out", f.out, "Folder of ncu's CSV and log and of the run made under ncu (default: results)")
      ->type_name("DIR");
  cmd->add_option("--ncu", f.ncu, "The ncu to run (default: ncu on PATH)")->type_name("PATH");
  cmd->callback([&exit_code, self_exe] {
    try {
      exit_code = profile(f, self_exe);
    } catch (const std::invalid_argument& e) {  // FlagError, ProfileCaseError, SettingError, NcuCsvError
      std::cerr << "kwb profile: " << e.what() << "\n";
      exit_code = kExitBadInput;
    } catch (const ReportError& e) {
      std::cerr << "kwb profile: " << e.what() << "\n";
      exit_code = kExitBadInput;
    }
  });
}

}  // namespace kwb::cli
