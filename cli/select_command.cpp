// `kwb select REPORT.json [--out selection.json] [--md selection.md] [--min-margin PCT]
// [--deterministic] [--plugin PATH]`: the fastest verified variant per (op, dtype, shape, mode) of a
// finished run, its margin over the next and whether that margin is above the noise
// (reports/select/selection.hpp). Needs no GPU. Whether a variant's output varies from run to run
// is this build's catalogue's word (Variant::varies_run_to_run), plugins' included when loaded.
//
// Exit codes: 0 a winner was named for at least one shape; 1 the report holds no case that passed
// verification and was timed (with --deterministic: none of a variant that writes the same bits
// every run), so there is nothing to select from (a well-formed report of a run that failed, or
// was filtered: the same code as a failed case, not "bad input"); 2 bad input: flags, a missing,
// malformed or other-schema report (the reader's message names the file and JSON path), or an
// output that cannot be written.
#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/flag_values.hpp"
#include "cli/plugin_flags.hpp"
#include "harness/catalogue/registry.hpp"
#include "reports/review/selection_tables.hpp"
#include "reports/review/text_table.hpp"
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
  bool wide = false;
  bool deterministic = false;
  std::vector<std::string> plugins;
};

// The catalogue's word on a variant: nullopt where this build (and the plugins loaded) lacks it.
std::optional<bool> catalogue_varies_run_to_run(const std::string& op, const std::string& variant) {
  const Variant* v = Registry::instance().find_variant(op, variant);
  if (v == nullptr) return std::nullopt;
  return v->varies_run_to_run;
}

// --deterministic: how many passed, timed cases it left out, and why, over every group.
std::string deterministic_note(const select::Selection& s) {
  int varying = 0, unknown = 0;
  auto count = [&](const std::map<std::string, int>& excluded) {
    if (auto it = excluded.find("varies run to run"); it != excluded.end()) varying += it->second;
    if (auto it = excluded.find("run to run unknown"); it != excluded.end()) unknown += it->second;
  };
  for (const auto& e : s.entries) count(e.excluded);
  for (const auto& g : s.unselected) count(g.excluded);
  std::string note = fmt::format("--deterministic: {} passed case(s) left out as varying run to run", varying);
  if (unknown > 0)
    note += fmt::format(", {} as not in this build's catalogue (load their plugins with --plugin)", unknown);
  note += "; only variants that write the same bits every run (on the same GPU) were candidates";
  return note;
}

// A terminal's width: the default table fits it, `--wide` prints every column unwrapped.
constexpr std::size_t kTerminalWidth = 120;

// --wide: selection_table as it is, one line per shape. By default: the runner-up's columns left to
// --wide, --md and --out (the margin says how far behind it is), each op's name on a line of its
// own above its shapes, and long cells wrapped to fit kTerminalWidth.
void print_selection(std::ostream& out, const review::Table& full, bool wide) {
  if (wide) {
    const review::FittedTable fitted = review::fit_text_table(full, 0);
    out << fitted.header << "\n";
    for (const auto& lines : fitted.rows) out << lines.front() << "\n";
    return;
  }
  // selection_table's columns: op, dtype, shape, winner, us, runner-up, us, margin, verdict, vs baseline.
  constexpr std::size_t kOp = 0;
  const std::vector<std::size_t> kept = {1, 2, 3, 4, 7, 8, 9};  // all but op and the runner-up's two
  review::Table t;
  for (std::size_t c : kept) {
    t.headers.push_back(full.headers[c]);
    t.numeric.push_back(full.numeric[c]);
  }
  for (const auto& row : full.rows) {
    auto& r = t.rows.emplace_back();
    for (std::size_t c : kept) r.push_back(row[c]);
  }
  const std::string indent = "  ";
  const review::FittedTable fitted = review::fit_text_table(t, kTerminalWidth - indent.size());
  out << indent << fitted.header << "\n";
  for (std::size_t i = 0; i < fitted.rows.size(); ++i) {
    if (i == 0 || full.rows[i][kOp] != full.rows[i - 1][kOp]) out << full.rows[i][kOp] << "\n";
    for (const std::string& line : fitted.rows[i]) out << indent << line << "\n";
  }
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
  settings.varies_run_to_run = catalogue_varies_run_to_run;
  settings.deterministic_only = f.deterministic;
  if (!load_plugin_flags("kwb select", f.plugins)) return kExitBadInput;
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
    if (f.deterministic)
      std::cerr << fmt::format("kwb select: {}: none of its {} case(s) is a verified, timed case of a variant that "
                               "writes the same bits every run; nothing to select from\n{}\n",
                               f.report, report.cases.size(), deterministic_note(selection));
    else
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

  print_selection(std::cout, review::selection_table(selection), f.wide);
  std::cout << "\n";
  for (const std::string& summary : review::selection_summary_lines(selection)) {
    const auto lines = f.wide ? std::vector<std::string>{summary} : review::wrap_cell(summary, kTerminalWidth - 2);
    for (std::size_t i = 0; i < lines.size(); ++i) std::cout << (i == 0 ? "" : "  ") << lines[i] << "\n";
  }
  const auto unselected = review::unselected_lines(selection);
  if (!unselected.empty()) {
    std::cout << fmt::format("\nnothing to select at {} shape(s):\n", unselected.size());
    for (const std::string& line : unselected) std::cout << "  " << line << "\n";
  }
  if (f.deterministic) {
    const auto lines = f.wide ? std::vector<std::string>{deterministic_note(selection)}
                              : review::wrap_cell(deterministic_note(selection), kTerminalWidth - 2);
    std::cout << "\n";
    for (std::size_t i = 0; i < lines.size(); ++i) std::cout << (i == 0 ? "" : "  ") << lines[i] << "\n";
  }
  if (selection.used_p10_p90 && !selection.used_samples)
    std::cout << "\nnote: the report holds no per-sample arrays; \"within noise\" means the p10-p90 ranges overlap\n";

  SelectionSource source = selection_source(report.run, f.report, settings.min_margin);
  source.deterministic_only = f.deterministic;
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
  cmd->add_flag("--wide", f.wide,
                "Print every column (the runner-up and its time too) on one line per shape, however wide");
  cmd->add_option("--min-margin", f.min_margin,
                  "Smallest margin of the winner over the runner-up called clear, as 1% or 0.01 (default 1%; 0 "
                  "lets the noise alone decide)")
      ->type_name("PCT");
  cmd->add_flag("--deterministic", f.deterministic,
                "Only variants that write the same bits every run on the same GPU are candidates (those with float "
                "atomics or rows handed out by demand vary in their last bits; `kwb list --markdown` marks them; a "
                "variant this build does not know is left out too: load its plugin with --plugin): for a training "
                "stack that must reproduce a run");
  add_plugin_option(cmd, f.plugins);
  cmd->footer(
      "Exit codes: 0 a winner named, 1 no case passed verification and was timed (with --deterministic: none of a "
      "variant that writes the same bits every run), 2 bad input.");
  cmd->callback([&exit_code, out, md] {
    f.out_given = out->count() > 0;
    f.markdown_given = md->count() > 0;
    exit_code = run_select(f);
  });
}

}  // namespace kwb::cli
