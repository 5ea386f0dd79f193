// `kwb select --md FILE`: the selection table as Markdown, with the per-op summary, the noise
// note and the groups with nothing to select; the same cells as the terminal table and the review
// report's section (reports/review/selection_tables.hpp).
#pragma once

#include <filesystem>
#include <string>

#include "reports/select/selection.hpp"
#include "reports/select/selection_json.hpp"

namespace kwb {

// The summary lines, the table, the note and the unselected groups, without a title: the body
// of `kwb select --md` and of the review report's "Fastest variant per shape" section.
std::string selection_section_markdown(const select::Selection& selection);

std::string selection_markdown(const select::Selection& selection, const SelectionSource& source);

// Written atomically.
void write_selection_markdown(const std::filesystem::path& path, const select::Selection& selection,
                              const SelectionSource& source);

}  // namespace kwb
