// The text `kwb history show` prints: one block per case, device and settings (mode, flush,
// preset, launch: runs measured differently are never one series), one line per run in time
// order (date, git SHA, median, change vs the previous run, GB/s, % of the DRAM roof) and CHANGE on the
// runs find_change_points flags. No SQL: the rows come from HistoryStore::trend.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "reports/history/change_points.hpp"
#include "reports/history/trend_row.hpp"

namespace kwb::history {

struct TrendSummary {
  int series = 0;  // case x device x settings blocks in the rows
  int printed = 0;  // of them printed (at most max_series)
  int runs = 0;     // over every series
  int change_points = 0;  // over every series
};

// rows ordered by identity, device, settings, start time (as HistoryStore::trend returns them).
// With max_series above 0 at most that many blocks are printed, those with a change point first
// (in the rows' order), then the rest: a store of a whole nightly holds thousands of cases.
TrendSummary print_trend(std::ostream& out, const std::vector<TrendRow>& rows, const ChangeRule& rule = {},
                         std::size_t max_series = 0);

}  // namespace kwb::history
