// `kwb compare BASE.json NEW.json`: reads two reports, judges every case they share, prints the
// table and writes JUnit XML / Markdown for CI.
//
// Exit codes: 0 no regression (speedups, same, ambiguous and unmatched cases included);
// 1 a regression: any case slower in NEW, or failed in NEW (verification, fault, timeout);
// 2 bad input: flags, a missing, malformed or other-schema report (the message names the file
// and JSON path), an output that cannot be written, or, with --strict-env, environments that
// differ. (3 stays `kwb run`'s "no GPU"; compare never needs one.)
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/compare_output.hpp"
#include "cli/flag_values.hpp"
#include "reports/compare/compare_report.hpp"
#include "reports/compare/compare_text.hpp"
#include "reports/compare/compare_markdown.hpp"
#include "reports/compare/junit_xml.hpp"
#include "harness/record/output_paths.hpp"

namespace kwb::cli {
namespace {

struct CompareFlags {
  std::string base, next;
  std::string threshold = "3%", min_us = "0.5";
  std::string junit, markdown;
  bool strict_env = false;
};

// Refuses an output path before any work, so a typo costs nothing.
bool output_usable(const std::string& flag, const std::string& path) {
  if (path.empty()) return true;
  if (auto problem = check_output_file(path)) {
    std::cerr << fmt::format("kwb compare: {}: {}; pass a file in a writable folder\n", flag, *problem);
    return false;
  }
  return true;
}

int compare(const CompareFlags& f) {
  CompareInputs in;
  try {
    in.settings.threshold = parse_threshold("--threshold", f.threshold);
    in.settings.min_effect_us = parse_non_negative_us("--min-us", f.min_us);
  } catch (const FlagError& e) {
    std::cerr << "kwb compare: " << e.what() << "\n";
    return kExitBadInput;
  }
  Report base, next;
  CompareReport report;
  try {
    base = read_report_json(f.base);
    next = read_report_json(f.next);
    if (next.run.suite) {  // NEW's suite thresholds, read strictly with the report
      in.suite_thresholds["default"] = next.run.suite->default_threshold;
      for (const auto& [op, fraction] : next.run.suite->op_thresholds) in.suite_thresholds[op] = fraction;
    }
    in.base = &base;
    in.next = &next;
    in.base_name = f.base;
    in.new_name = f.next;
    if (!output_usable("--junit", f.junit) || !output_usable("--md", f.markdown)) return kExitBadInput;
    report = compare_reports(in);
  } catch (const ReportError& e) {
    std::cerr << "kwb compare: " << e.what() << "\n";
    return kExitBadInput;
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
  return report.regression() ? kExitCaseFailed : kExitOk;
}

}  // namespace

void add_compare_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "compare",
      "Compare two reports case by case: ratio NEW/BASE with an interval, a verdict faster / slower / same / "
      "ambiguous, exit 1 on a slowdown or a failure in NEW");
  static CompareFlags f;
  cmd->add_option("BASE", f.base, "The baseline report.json")->required();
  cmd->add_option("NEW", f.next, "The report.json to judge against it")->required();
  cmd->add_option("--threshold", f.threshold,
                  "Relative change that counts, as 3% or 0.03 (default 3%); NEW's suite thresholds, when it has "
                  "them, win per op")
      ->type_name("PCT");
  cmd->add_option("--min-us", f.min_us,
                  "Changes smaller than this many microseconds are \"same\" (timer resolution; default 0.5)")
      ->type_name("US");
  cmd->add_option("--junit", f.junit, "Also write JUnit XML here (one testsuite per op)")->type_name("FILE");
  cmd->add_option("--md", f.markdown, "Also write a Markdown summary here")->type_name("FILE");
  cmd->add_flag("--strict-env", f.strict_env,
                "Exit 2 when the reports differ in GPU, driver, CUDA runtime, mode, flush, preset, timer or test slowdown");
  cmd->footer("Exit codes: 0 no regression, 1 a case slower or failed in NEW, 2 bad input (or --strict-env and "
              "the environments differ).");
  cmd->callback([&exit_code] { exit_code = compare(f); });
}

}  // namespace kwb::cli
