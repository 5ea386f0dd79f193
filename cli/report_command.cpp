// `kwb report FILE.json --html OUT.html --md OUT.md`: the review report of a finished run.
//
// Reads the JSON report through the strict reader (a malformed or newer file is refused with its
// JSON path, exit 2), builds the review model once, and writes either output or both. Needs no
// GPU: a report measured elsewhere renders anywhere.
#include <iostream>

#include "cli/commands.hpp"
#include "harness/record/json_node.hpp"
#include "reports/review/review_model.hpp"
#include "harness/record/json_report.hpp"
#include "harness/record/output_paths.hpp"
#include "reports/review/review_html.hpp"
#include "reports/review/review_markdown.hpp"

namespace kwb::cli {

void add_report_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "report", "Render a JSON report as a review: self-contained HTML (roofline, tables, sweeps) and/or Markdown");
  static std::string input;
  static std::string html_path, md_path;
  cmd->add_option("FILE", input, "A report.json written by `kwb run`")->required();
  cmd->add_option("--html", html_path, "Write the HTML review here (one file, no external resources)");
  cmd->add_option("--md", md_path, "Write the Markdown review here");
  cmd->callback([&exit_code] {
    if (html_path.empty() && md_path.empty()) {
      std::cerr << "kwb report: nothing to write; give --html OUT.html, --md OUT.md or both\n";
      exit_code = kExitBadInput;
      return;
    }
    // The outputs are checked before anything is read, as compare and select check theirs.
    for (const auto& [flag, path] : {std::pair{"--html", &html_path}, std::pair{"--md", &md_path}}) {
      if (path->empty()) continue;
      if (auto problem = check_output_file(*path)) {
        std::cerr << "kwb report: " << flag << ": " << *problem << "; pass a file in a writable folder\n";
        exit_code = kExitBadInput;
        return;
      }
    }
    Report report;
    try {
      report = read_report_json(input);
    } catch (const ReportError& e) {
      std::cerr << "kwb report: " << e.what()
                << "\n(the file must be a kwb.report/3 (or /2) report.json written by `kwb run` of this version)\n";
      exit_code = kExitBadInput;
      return;
    }
    const review::ReviewModel model = review::build_review_model(report.run, report.cases);
    try {
      if (!html_path.empty()) {
        write_review_html(html_path, model);
        std::cout << "wrote " << html_path << "\n";
      }
      if (!md_path.empty()) {
        write_review_markdown(md_path, model);
        std::cout << "wrote " << md_path << "\n";
      }
    } catch (const std::exception& e) {
      std::cerr << "kwb report: cannot write an output: " << e.what() << "\n";
      exit_code = kExitBadInput;
      return;
    }
    exit_code = kExitOk;
  });
}

}  // namespace kwb::cli
