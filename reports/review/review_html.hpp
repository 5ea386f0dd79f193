// The review report as one self-contained HTML file: inline CSS (with a print stylesheet for
// A4), inline SVG charts, no scripts and no external resources, so it can be mailed, archived
// and read without the tool.
#pragma once

#include <filesystem>
#include <string>

#include "reports/review/review_model.hpp"

namespace kwb {

// Sections, in order: title block, summary, environment and settings, roofline, speedups,
// per-op tables, sweep charts, findings. The document is well-formed XML (void elements
// self-closed), so tests and other tools can parse it.
std::string review_html(const review::ReviewModel& model);

// Written atomically.
void write_review_html(const std::filesystem::path& path, const review::ReviewModel& model);

}  // namespace kwb
