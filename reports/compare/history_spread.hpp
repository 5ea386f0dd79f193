// Each case's run-to-run spread from the result history (`kwb compare --history DB`), the same
// measure as --base-runs (run_spread.hpp) taken from the runs `kwb history add` kept: the largest
// |median(run) / median(BASE) - 1| over the stored runs of BASE's build measured alike (same git
// SHA, GPU name, mode, flush, preset and launch; BASE's own row, if stored, is left out). Runs of other
// builds are history, not noise, and are not read. Pure: the rows come from HistoryStore::trend,
// so this builds and is tested without SQLite.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "harness/record/json_report.hpp"
#include "reports/compare/run_spread.hpp"
#include "reports/history/trend_row.hpp"

namespace kwb {

struct HistorySpread {
  std::map<std::string, CaseSpread> spreads;  // case identity -> spread, as run_to_run_spread
  int runs = 0;                               // stored runs of BASE's build that timed a case of BASE
};

HistorySpread history_spread(const Report& base, const std::vector<history::TrendRow>& rows);

// Both sources together: per case the larger spread, the runs added up.
void add_spreads(std::map<std::string, CaseSpread>& into, const std::map<std::string, CaseSpread>& more);

}  // namespace kwb
