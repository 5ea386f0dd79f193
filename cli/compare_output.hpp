// The terminal form of a comparison: environment differences first, then every matched case
// sorted by largest change (failures on top), the summary per op, unmatched cases and the result.
// Colour (ANSI) only when asked, i.e. when stdout is a terminal and NO_COLOR is unset.
#pragma once

#include <ostream>

#include "reports/compare/compare_report.hpp"

namespace kwb::cli {

void print_comparison(std::ostream& out, const CompareReport& report, bool colour);

}  // namespace kwb::cli
