// What `kwb run` prints: one progress line per case, and a summary table at the end.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>

#include "cli/run_columns.hpp"
#include "harness/record/report.hpp"

namespace kwb::cli {

// One line per finished case; `eta_s` (the session's estimate for the rest) is appended when given.
void print_progress(std::ostream& out, const CaseRecord& record, std::size_t total,
                    std::optional<double> eta_s = std::nullopt);
// The results table; `columns` (kwb run --columns) adds counter figures or metric totals at the
// end of each row.
void print_summary(std::ostream& out, const Report& report, const std::vector<CounterColumn>& columns = {});

}  // namespace kwb::cli
