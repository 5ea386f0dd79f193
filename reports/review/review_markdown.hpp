// The review report as Markdown: the same sections and tables as the HTML one, the charts as a
// short text summary (the roofline's ceilings and points are in the tables), for a pull request
// comment, a wiki page or a terminal.
#pragma once

#include <filesystem>
#include <string>

#include "reports/review/review_model.hpp"
#include "reports/review/review_tables.hpp"

namespace kwb {

// A pipe table (numeric columns right-aligned), cells escaped; ends with a blank line.
std::string markdown_table(const review::Table& table);

std::string review_markdown(const review::ReviewModel& model);

// Written atomically.
void write_review_markdown(const std::filesystem::path& path, const review::ReviewModel& model);

}  // namespace kwb
