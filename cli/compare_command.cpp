// `kwb compare BASE.json NEW.json`: reads two reports, judges every case they share, prints the
// table and writes JUnit XML / Markdown for CI.
//
// The gate's rules come from the flags, then BASE's suite (reports/compare/gate_settings.hpp);
// `--base-runs` and `--history` give each case its run-to-run spread (reports/compare/run_spread.hpp,
// history_spread.hpp).
// Exit codes: 0 no regression (speedups, same, and, unless --fail-on names them, ambiguous,
// missing and newly skipped cases included); 1 a regression: any case slower in NEW, or failed in
// NEW (verification, fault, timeout), or a class --fail-on (or BASE's suite) names is present;
// 2 bad input: flags, a missing, malformed or other-schema report (the message names the file
// and JSON path), a --base-runs report of another build or setup than BASE, a judged case without
// per-sample times, an output that cannot be written, or, with --strict-env, environments that
// differ; with --confirm also no GPU, a report of another build than the kwb given for its side,
// a suspect case that build cannot measure or this kwb cannot judge (no work model for its op and
// shape: the rounds are judged against their roofs here), or reports measured under other settings (mode,
// flush, launch, preset, seed). Without --confirm compare never needs a GPU.
//
// `--confirm` re-measures the suspects (slower, faster, ambiguous) on this machine's GPU, each
// side by its own build, interleaved round by round (cli/compare_confirm.hpp); their confirmed
// verdicts replace the reports' (both are shown) and the exit code follows them.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/compare_confirm.hpp"
#include "cli/compare_output.hpp"
#include "cli/flag_values.hpp"
#include "cli/progress_display.hpp"
#include "harness/record/output_paths.hpp"
#include "reports/compare/compare_markdown.hpp"
#include "reports/compare/compare_report.hpp"
#include "reports/compare/compare_text.hpp"
#include "reports/compare/confirm_decision.hpp"
#include "reports/compare/gate_settings.hpp"
#include "reports/compare/history_spread.hpp"
#include "reports/compare/junit_xml.hpp"
#include "reports/compare/run_spread.hpp"
#ifdef KWB_HAVE_SQLITE3
#include "reports/history/history_store.hpp"
#endif

namespace kwb::cli {
namespace {

struct CompareFlags {
  std::string base, next;
  std::string threshold, min_us = "0.5";  // threshold empty: BASE's suite, else 3%
  std::string base_runs, fail_on;         // comma lists; empty: not given
  std::string history;                    // a `kwb history` database; empty: not given
  std::string junit, markdown;
  bool strict_env = false;
  bool allow_disjoint = false;
  bool confirm = false;
  std::string base_kwb, new_kwb, confirm_rounds, case_timeout, progress;  // empty: not given
};

// --confirm's flags, checked before any report is read; the others need --confirm.
ConfirmFlags parse_confirm_flags(const CompareFlags& f) {
  ConfirmFlags c;
  c.confirm = f.confirm;
  const std::pair<const char*, const std::string*> needing[] = {
      {"--base-kwb", &f.base_kwb}, {"--new-kwb", &f.new_kwb}, {"--confirm-rounds", &f.confirm_rounds},
      {"--case-timeout", &f.case_timeout}, {"--progress", &f.progress}};
  for (const auto& [flag, value] : needing)
    if (!f.confirm && !value->empty())
      throw FlagError(fmt::format("{} is a setting of --confirm (the re-measurement of suspect cases); add --confirm, "
                                  "or drop {}", flag, flag));
  c.base_kwb = f.base_kwb;
  c.new_kwb = f.new_kwb;
  if (!f.confirm_rounds.empty()) {
    const std::size_t rounds = parse_positive_count("--confirm-rounds", f.confirm_rounds);
    if (rounds < static_cast<std::size_t>(kMinConfirmRounds) || rounds > 100)
      throw FlagError(fmt::format("--confirm-rounds {}: give {} to 100 rounds (each measures every suspect once per "
                                  "side; fewer than {} cannot give an interval), e.g. --confirm-rounds {}",
                                  f.confirm_rounds, kMinConfirmRounds, kMinConfirmRounds, kDefaultConfirmRounds));
    c.rounds = static_cast<int>(rounds);
  }
  if (!f.case_timeout.empty()) c.case_timeout_s = parse_positive_seconds("--case-timeout", f.case_timeout);
  if (!f.progress.empty()) c.progress = parse_progress_flag("--progress", f.progress);
  return c;
}

// "a.json,b.json" -> its items; an empty item ("a.json,,b.json", a trailing comma) is refused.
std::vector<std::string> comma_list(const std::string& flag, const std::string& text, const std::string& example) {
  std::vector<std::string> items;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty())
      throw FlagError(fmt::format("{} '{}': an empty item (two commas, or one at an end); write the items separated by "
                                  "single commas, e.g. {} {}", flag, text, flag, example));
    items.push_back(std::move(item));
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

// "--fail-on ambiguous,missing" -> the classes; "none" -> none (overrides BASE's suite).
std::vector<FailOnClass> parse_fail_on(const std::string& text) {
  const std::string example = "ambiguous,missing,skipped (any of them), or none";
  if (text == "none") return {};
  std::vector<FailOnClass> out;
  for (const std::string& name : comma_list("--fail-on", text, "missing,skipped")) {
    const auto c = parse_fail_on_class(name);
    if (!c) throw FlagError(fmt::format("--fail-on: '{}' is not a class compare can fail on; write {}", name, example));
    if (std::find(out.begin(), out.end(), *c) != out.end())
      throw FlagError(fmt::format("--fail-on: '{}' is given twice; name each class once", name));
    out.push_back(*c);
  }
  return out;
}

// Refuses an output path before any work, so a typo costs nothing.
bool output_usable(const std::string& flag, const std::string& path) {
  if (path.empty()) return true;
  if (auto problem = check_output_file(path)) {
    std::cerr << fmt::format("kwb compare: {}: {}; pass a file in a writable folder\n", flag, *problem);
    return false;
  }
  return true;
}

// --history DB: the spread from stored runs of BASE's build. Errors are ReportErrors (exit 2) that
// name the database and say how to fix it; a build without SQLite says what it lacks.
HistorySpread spread_from_history(const std::string& path, const Report& base) {
#ifdef KWB_HAVE_SQLITE3
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))  // HistoryStore would create it: refuse a typo instead
    throw ReportError(fmt::format("--history {}: no such file; pass the database `kwb history add REPORT.json...` "
                                  "writes (its --db, or {} by default)", path, history::default_history_path().string()));
  try {
    const history::HistoryStore store(path);
    return history_spread(base, store.trend({.device_contains = base.run.device ? base.run.device->name : ""}));
  } catch (const history::HistoryError& e) {
    throw ReportError(fmt::format("--history: {}; pass a database that `kwb history add` wrote", e.what()));
  }
#else
  throw ReportError(fmt::format("--history {}: this kwb was built without SQLite, which the history needs; install "
                                "libsqlite3-dev and rebuild, or pass other runs of BASE with --base-runs", path));
#endif
}

int compare(const CompareFlags& f, const std::string& self_exe) {
  CompareInputs in;
  ConfirmFlags confirm;
  std::optional<double> threshold;
  std::optional<std::vector<FailOnClass>> fail_on;
  std::vector<std::string> run_paths;
  try {
    if (!f.threshold.empty()) threshold = parse_threshold("--threshold", f.threshold);
    in.settings.min_effect_us = parse_non_negative_us("--min-us", f.min_us);
    if (!f.fail_on.empty()) fail_on = parse_fail_on(f.fail_on);
    if (!f.base_runs.empty()) run_paths = comma_list("--base-runs", f.base_runs, "run2/report.json,run3/report.json");
    confirm = parse_confirm_flags(f);
  } catch (const FlagError& e) {
    std::cerr << "kwb compare: " << e.what() << "\n";
    return kExitBadInput;
  }
  Report base, next;
  std::vector<Report> runs(run_paths.size());
  CompareReport report;
  try {
    base = read_report_json(f.base);
    next = read_report_json(f.next);
    const ThresholdChoice thresholds = choose_thresholds(threshold, base);
    in.suite_thresholds = thresholds.per_op;
    in.settings.threshold = thresholds.fallback;
    in.threshold_source = thresholds.source;
    const FailOnChoice gate = choose_fail_on(fail_on, base);
    in.fail_on = gate.classes;
    in.fail_on_source = gate.source;
    in.base = &base;
    in.next = &next;
    in.base_name = f.base;
    in.new_name = f.next;
    std::vector<NamedReport> named_runs;
    for (std::size_t i = 0; i < run_paths.size(); ++i) {
      try {
        runs[i] = read_report_json(run_paths[i]);
      } catch (const ReportError& e) {  // say which flag brought the file in
        throw ReportError(fmt::format("--base-runs: {}", e.what()));
      }
      named_runs.push_back({&runs[i], run_paths[i]});
    }
    in.spreads = run_to_run_spread({&base, f.base}, named_runs);
    in.base_runs = static_cast<int>(runs.size());
    if (!f.history.empty()) {
      const HistorySpread stored = spread_from_history(f.history, base);
      add_spreads(in.spreads, stored.spreads);
      in.history_runs = stored.runs;
      in.history_name = f.history;
    }
    if (!output_usable("--junit", f.junit) || !output_usable("--md", f.markdown)) return kExitBadInput;
    report = compare_reports(in);
  } catch (const ReportError& e) {
    std::cerr << "kwb compare: " << e.what() << "\n";
    return kExitBadInput;
  }
  // No case in common: nothing was judged, and a gate that passed on that would hide a wrong file.
  if (report.cases.empty() && !f.allow_disjoint) {
    std::cerr << fmt::format("kwb compare: {} ({} cases) and {} ({} cases) have no case in common, so nothing was "
                             "compared; check that these are the runs you meant (same ops, shapes, dtypes), or pass "
                             "--allow-disjoint to accept it\n",
                             f.base, base.cases.size(), f.next, next.cases.size());
    return kExitBadInput;
  }
  if (auto problem = missing_samples_problem(report)) {
    std::cerr << "kwb compare: " << *problem << "\n";
    return kExitBadInput;
  }
  if (confirm.confirm) {  // the display's bar is cleared before the table is printed
    ProgressDisplay display(std::cerr, {.style = choose_progress_style(confirm.progress)});
    if (auto refused = confirm_suspects(report, base, next, in.settings, confirm, self_exe, display)) return *refused;
  }

  const bool colour = ::isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
  print_comparison(std::cout, report, colour);
  try {
    if (!f.junit.empty()) write_compare_junit_xml(f.junit, report);
    if (!f.markdown.empty()) write_compare_markdown(f.markdown, report);
  } catch (const std::exception& e) {
    std::cerr << "kwb compare: cannot write an output: " << e.what() << "\n";
    return kExitBadInput;
  }
  if (f.strict_env && !report.environment.empty()) {
    std::string what;
    for (const auto& d : report.environment) what += (what.empty() ? "" : ", ") + d.what;
    std::cerr << fmt::format("kwb compare: --strict-env: the reports differ in {}; compare reports measured "
                             "alike, or drop --strict-env to compare anyway\n", what);
    return kExitBadInput;
  }
  return report.fails() ? kExitCaseFailed : kExitOk;
}

}  // namespace

void add_compare_command(CLI::App& app, int& exit_code, const std::string& self_exe) {
  auto* cmd = app.add_subcommand(
      "compare",
      "Compare two reports case by case: ratio NEW/BASE with an interval, a verdict faster / slower / same / "
      "ambiguous, exit 1 on a slowdown or a failure in NEW (and on what --fail-on names)");
  static CompareFlags f;
  cmd->add_option("BASE", f.base, "The baseline report.json: the accepted reference, whose suite sets the gate's rules")
      ->required();
  cmd->add_option("NEW", f.next, "The report.json to judge against it")->required();
  cmd->add_option("--threshold", f.threshold,
                  "Relative change that counts, as 3% or 0.03, for every op; without it BASE's suite thresholds "
                  "apply (per op, then its default), else 3%. NEW's suite is never read for them")
      ->type_name("PCT");
  cmd->add_option("--min-us", f.min_us,
                  "Changes smaller than this many microseconds are \"same\" (timer resolution; default 0.5)")
      ->type_name("US");
  cmd->add_option("--base-runs", f.base_runs,
                  "More reports of BASE's build measured alike, as one comma list (r2.json,r3.json): each case's band "
                  "widens to its run-to-run spread, the largest difference between BASE's median and theirs. A "
                  "report of another build, GPU or setting is refused")
      ->type_name("FILE,...");
  cmd->add_option("--history", f.history,
                  "A result history (`kwb history add`): its runs of BASE's build measured alike (same git SHA, GPU, "
                  "mode, flush, preset, launch) give each case its run-to-run spread, as --base-runs (both may be given)")
      ->type_name("DB");
  cmd->add_option("--fail-on", f.fail_on,
                  "Also exit 1 on these, as a comma list: ambiguous (cases the samples or clocks cannot judge), "
                  "missing (cases of BASE not in NEW), skipped (cases NEW skipped that BASE timed); none for "
                  "nothing. Default: BASE's suite's compare.fail_on, else none")
      ->type_name("CLASSES");
  cmd->add_option("--junit", f.junit, "Also write JUnit XML here (one testsuite per op)")->type_name("FILE");
  cmd->add_option("--md", f.markdown, "Also write a Markdown summary here")->type_name("FILE");
  cmd->add_flag("--confirm", f.confirm,
                "Re-measure the cases judged slower, faster or ambiguous on this machine's GPU, BASE's build against "
                "NEW's, interleaved in rounds (B N, N B, ...) so that drift and throttling hit both sides; each "
                "confirmed verdict replaces the reports' (both are shown) and the exit code follows them. Needs the "
                "reports' GPU and settings (mode, flush, launch, preset, seed)");
  cmd->add_option("--base-kwb", f.base_kwb,
                  "With --confirm: the kwb built from BASE's git SHA (default: this kwb, if it is built from it)")
      ->type_name("PATH");
  cmd->add_option("--new-kwb", f.new_kwb,
                  "With --confirm: the kwb built from NEW's git SHA (default: this kwb, if it is built from it)")
      ->type_name("PATH");
  cmd->add_option("--confirm-rounds", f.confirm_rounds,
                  "With --confirm: rounds per case, each measuring it once on each side (default 6, at least 3)")
      ->type_name("N");
  cmd->add_option("--case-timeout", f.case_timeout,
                  "With --confirm: seconds one measurement may take before its worker is ended (default 120), "
                  "counted again once a case has its inputs and oracle (a build that predates that counts them in)")
      ->type_name("S");
  cmd->add_option("--progress", f.progress, "With --confirm: how the rounds' progress is shown on stderr, as for kwb run: bar "
                  "(one line updated in place), lines (a line per round, for logs) or none. Default: bar on a "
                  "terminal, lines otherwise")
      ->type_name("bar|lines|none");
  cmd->add_flag("--allow-disjoint", f.allow_disjoint,
                "Accept reports with no case in common (exit 0 then, nothing compared); without it that is exit 2");
  cmd->add_flag("--strict-env", f.strict_env,
                "Exit 2 when the reports differ in GPU, driver, CUDA runtime, mode, flush, launch, preset, timer or test slowdown");
  cmd->footer("A slower or faster verdict that the two sides' mean SM clocks could explain is \"ambiguous "
              "(throttled)\"; so is one within 10% beyond the band of a case that ran half its samples under the "
              "power cap, unless --base-runs or --history give its run-to-run spread from 2 or more other runs "
              "(--confirm decides such cases). Reports without mean clocks: over 5% of a side's samples throttled, "
              "or SM clock middles over 3% apart. Every judged case needs its per-sample "
              "times (kwb run keeps them; most reports under samples/ drop them, samples/h100-compare/ keeps them).\n"
              "--confirm re-measures the slower, faster and ambiguous cases on this GPU, each side by the kwb built "
              "from its report's git SHA (this one by default; --base-kwb, --new-kwb otherwise), interleaved round "
              "by round; the confirmed verdicts replace the reports' and decide the exit code.\n"
              "Exit codes: 0 no regression, 1 a case slower or failed in NEW or a --fail-on class present, 2 bad "
              "input (or --strict-env and the environments differ; with --confirm also no GPU, another build, a case the "
              "build cannot measure, or settings that differ).");
  cmd->callback([&exit_code, self_exe] { exit_code = compare(f, self_exe); });
}

}  // namespace kwb::cli
