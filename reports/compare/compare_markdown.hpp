// The Markdown page of a comparison, for a CI job summary or a pull request: verdict, settings,
// environment differences, summary per op (geometric mean NEW/BASE and counts), the table of
// changed cases (everything not "same"), and the cases found in one report only.
#pragma once

#include <filesystem>
#include <string>

#include "reports/compare/compare_report.hpp"

namespace kwb {

std::string compare_markdown(const CompareReport& report);

// Written atomically (harness/record/atomic_file.hpp).
void write_compare_markdown(const std::filesystem::path& path, const CompareReport& report);

}  // namespace kwb
