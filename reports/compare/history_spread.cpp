// Run-to-run spread from stored runs of BASE's build (see history_spread.hpp).
#include "reports/compare/history_spread.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "reports/compare/match.hpp"

namespace kwb {
namespace {

std::string setting(const RunInfo& run, const std::string& key) {
  auto it = run.settings.find(key);
  return it != run.settings.end() ? it->second : "";
}

}  // namespace

HistorySpread history_spread(const Report& base, const std::vector<history::TrendRow>& rows) {
  // The history's own words for a run's settings (HistoryStore::trend), built from BASE's.
  const std::string launch = launch_of(base);
  const std::string settings = "mode " + setting(base.run, "mode") + ", flush " + setting(base.run, "flush") +
                               ", preset " + setting(base.run, "preset") +
                               (launch == kDefaultLaunchName ? "" : ", launch " + launch);
  const std::string gpu = base.run.device ? base.run.device->name : "";
  const std::string driver = history::driver_label(base.run.device.value_or(DeviceInfo{}));
  std::map<std::string, double> base_median;  // history identity (the record's nvtx_range) -> median
  std::map<std::string, std::string> key_of;  // history identity -> case_key
  for (const CaseRecord& c : base.cases)
    if (c.timing && c.timing->span.median > 0) {
      base_median[c.nvtx_range] = c.timing->span.median;
      key_of[c.nvtx_range] = case_key(c);
    }
  HistorySpread out;
  std::set<std::string> runs;  // started_at of the stored runs that gave a spread
  for (const history::TrendRow& row : rows) {
    if (row.git_sha != base.run.git_sha || row.device_name != gpu || row.driver != driver ||
        row.settings != settings)
      continue;
    if (row.started_at == base.run.started_at) continue;  // BASE itself, added to the history
    auto median = base_median.find(row.identity);
    if (median == base_median.end() || !row.median_us || !(*row.median_us > 0)) continue;
    CaseSpread& s = out.spreads[key_of.at(row.identity)];
    s.spread = std::max(s.spread, std::abs(*row.median_us / median->second - 1));
    s.runs += 1;
    runs.insert(row.started_at);
  }
  out.runs = static_cast<int>(runs.size());
  return out;
}

void add_spreads(std::map<std::string, CaseSpread>& into, const std::map<std::string, CaseSpread>& more) {
  for (const auto& [key, s] : more) {
    CaseSpread& t = into[key];
    t.spread = std::max(t.spread, s.spread);
    t.runs += s.runs;
  }
}

}  // namespace kwb
