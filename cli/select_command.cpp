// `kwb select REPORT.json [--out selection.json] [--md selection.md] [--min-margin PCT]`: the
// fastest verified variant per (op, dtype, shape, mode) of a finished run, its margin over the
// next and whether that margin is above the noise (reports/select/selection.hpp). Needs no GPU.
//
// Exit codes: 0 a winner was named for at least one shape; 1 the report holds no case that passed
// verification and was timed, so there is nothing to select from (a well-formed report of a run
// that failed: the same code as a failed case, not "bad input"); 2 bad input: flags, a missing,
// malformed or other-schema report (the reader's message names the file and JSON path), or an
// output that cannot be written.
#include <algorithm>
#include <iostream>
#include <tuple>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/flag_values.hpp"
#include "reports/review/selection_tables.hpp"
#include "reports/select/selection.hpp"
#include "harness/record/json_report.hpp"
#include "harness/record/output_paths.hpp"
#include "reports/select/selection_json.hpp"
#include "reports/select/selection_markdown.hpp"

namespace kwb::cli {
namespace {

struct SelectFlags {
  std::string report;
  std::string out, markdown;
  std::string min_margin = "1%";
  bool out_given = false, markdown_given = false;  // `--out ''` is a mistake, not "no file"
};

// The table with columns padded to their widest cell; numbers right-aligned.
void print_table(std::ostream& out, const review::Table& t) {
  std::vector<std::size_t> width(t.headers.size());
  for (std::size_t i = 0; i < t.headers.size(); ++i) width[i] = t.headers[i].size();
  for (const auto& row : t.rows)
    for (std::size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], row[i].size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const bool right = i < t.numeric.size() && t.numeric[i];
      s += right ? fmt::format("{:>{}}", cells[i], width[i]) : fmt::format("{:<{}}", cells[i], width[i]);
      if (i + 1 < cells.size()) s += "  ";
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out << s << "\n";
  };
  line(t.headers);
  for (const auto& row : t.rows) line(row);
}

// 0 is allowed here (every margin above the noise counts), unlike compare's threshold.
double parse_min_margin(const std::string& text) {
  if (text == "0" || text == "0%" || text == "0.0") return 0;
  return parse_threshold("--min-margin", text);
}

int run_select(const SelectFlags& f) {
  select::SelectSettings settings;
  try {
    settings.min_margin = parse_min_margin(f.min_margin);
  } catch (const FlagError& e) {
    std::cerr << "kwb select: " << e.what() << "\n";
    return kExitBadInput;
  }
  Report report;
  try {
    report = read_report_json(f.report);
  } catch (const ReportError& e) {
    std::cerr << "kwb select: " << e.what()
              << "\n(the file must be a kwb.report/3 (or /2) report.json written by `kwb run` or `kwb merge`)\n";
    return kExitBadInput;
  }

  const select::Selection selection = select::select_fastest(report.run, report.cases, settings);
  if (selection.entries.empty()) {
    std::cerr << fmt::format("kwb select: {}: none of its {} case(s) passed verification and was timed; nothing "
                             "to select from (run the cases again, or see `kwb report` for why they failed)\n",
                             f.report, report.cases.size());
    for (const std::string& line : review::unselected_lines(selection)) std::cerr << "  " << line << "\n";
    return kExitCaseFailed;
  }

  // Probed only now: the probe creates the file, and a run with nothing to select leaves none.
  // Selecting is cheap, so nothing is lost by refusing a bad path after it.
  for (const auto& [flag, path, given] :
       {std::tuple{"--out", f.out, f.out_given}, std::tuple{"--md", f.markdown, f.markdown_given}}) {
    if (!given) continue;
    if (auto problem = check_output_file(path)) {
      std::cerr << fmt::format("kwb select: {}: {}; pass a file in a writable folder\n", flag, *problem);
      return kExitBadInput;
    }
  }

  print_table(std::cout, review::selection_table(selection));
  std::cout << "\n";
  for (const std::string& line : review::selection_summary_lines(selection)) std::cout << line << "\n";
  const auto unselected = review::unselected_lines(selection);
  if (!unselected.empty()) {
    std::cout << fmt::format("\nnothing to select at {} shape(s):\n", unselected.size());
    for (const std::string& line : unselected) std::cout << "  " << line << "\n";
  }
  if (selection.used_p10_p90 && !selection.used_samples)
    std::cout << "\nnote: the report holds no per-sample arrays; \"within noise\" means the p10-p90 ranges overlap\n";

  const SelectionSource source = selection_source(report.run, f.report, settings.min_margin);
  try {
    if (f.out_given) {
      write_selection_json(f.out, selection, source);
      std::cout << "wrote " << f.out << "\n";
    }
    if (f.markdown_given) {
      write_selection_markdown(f.markdown, selection, source);
      std::cout << "wrote " << f.markdown << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "kwb select: cannot write an output: " << e.what() << "\n";
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace

void add_select_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "select",
      "The fastest verified variant per op, dtype and shape of a report, its margin over the next and whether "
      "that margin is above the noise; writes a selection table (JSON) a training stack can load");
  static SelectFlags f;
  cmd->add_option("REPORT", f.report, "A report.json written by `kwb run` or `kwb merge`")->required();
  auto* out = cmd->add_option("--out", f.out, "Write the selection as JSON (schema kwb.selection/1) here")->type_name("FILE");
  auto* md = cmd->add_option("--md", f.markdown, "Write the selection table as Markdown here")->type_name("FILE");
  cmd->add_option("--min-margin", f.min_margin,
                  "Smallest margin of the winner over the runner-up called clear, as 1% or 0.01 (default 1%; 0 "
                  "lets the noise alone decide)")
      ->type_name("PCT");
  cmd->footer("Exit codes: 0 a winner named, 1 no case passed verification and was timed, 2 bad input.");
  cmd->callback([&exit_code, out, md] {
    f.out_given = out->count() > 0;
    f.markdown_given = md->count() > 0;
    exit_code = run_select(f);
  });
}

}  // namespace kwb::cli
