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
  int series = 0;  // case x device blocks printed
  int runs = 0;
  int change_points = 0;
};

// rows ordered by identity, device, settings, start time (as HistoryStore::trend returns them).
TrendSummary print_trend(std::ostream& out, const std::vector<TrendRow>& rows, const ChangeRule& rule = {});

}  // namespace kwb::history
