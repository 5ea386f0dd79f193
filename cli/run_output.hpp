// What `kwb run` prints: one progress line per case, and a summary table at the end.
#pragma once

#include <cstddef>
#include <ostream>

#include "sinks/json_report.hpp"

namespace kwb::cli {

void print_progress(std::ostream& out, const CaseRecord& record, std::size_t total);
void print_summary(std::ostream& out, const Report& report);

}  // namespace kwb::cli
