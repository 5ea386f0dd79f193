// Markdown writer for `kwb select` (see selection_markdown.hpp).
#include "reports/select/selection_markdown.hpp"

#include <fmt/format.h>

#include "reports/review/selection_tables.hpp"
#include "harness/record/atomic_file.hpp"
#include "reports/review/review_markdown.hpp"

namespace kwb {

std::string selection_markdown(const select::Selection& s, const SelectionSource& source) {
  std::string md = fmt::format("# Fastest variant per shape: {}\n\n", source.device.empty() ? "unknown GPU" : source.device);
  md += fmt::format("- **Report**: `{}`\n- **Driver**: {}\n- **git**: {}\n- **Minimum margin**: {:.2f}%\n\n",
                    source.source_report, source.driver.empty() ? "unknown" : source.driver, source.git_sha,
                    source.min_margin * 100);
  if (source.deterministic_only)
    md += "Candidates: only variants that write the same bits every run (`--deterministic`); the others are "
          "counted as excluded.\n\n";
  md += selection_section_markdown(s);
  return md;
}

std::string selection_section_markdown(const select::Selection& s) {
  if (s.entries.empty()) return "No verified, timed case: nothing to select.\n\n";
  // Appended piecewise: GCC 12 warns (-Wrestrict, a known false positive) on "- " + x + "\n".
  std::string md;
  for (const std::string& line : review::selection_summary_lines(s)) md.append("- ").append(line).append("\n");
  md.append("\n").append(markdown_table(review::selection_table(s)));
  md.append(review::selection_note(s)).append("\n\n");
  const auto unselected = review::unselected_lines(s);
  if (!unselected.empty()) {
    md += "Nothing to select at:\n\n";
    for (const std::string& line : unselected) md.append("- ").append(line).append("\n");
    md += "\n";
  }
  return md;
}

void write_selection_markdown(const std::filesystem::path& path, const select::Selection& selection,
                              const SelectionSource& source) {
  atomic_write_file(path, selection_markdown(selection, source));
}

}  // namespace kwb
