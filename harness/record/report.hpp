// A run's report as data: its environment (RunInfo) and one record per case, in plan order.
// What every stage and report that passes a report around needs; reading and writing it as JSON
// is json_report.hpp's business, CSV csv_report.hpp's.
#pragma once

#include <string>
#include <vector>

#include "harness/record/record.hpp"

namespace kwb {

// Written by this build. /3 added hardware counters (CaseRecord::counters, ncu_counters, the
// measured roofline in Derived::measured); a /2 report reads as one without them.
inline constexpr const char* kReportSchema = "kwb.report/3";
inline constexpr const char* kOlderReportSchema = "kwb.report/2";

struct Report {
  RunInfo run;
  std::vector<CaseRecord> cases;
};

// How a report's samples were launched ("stream" or "graph"): its run.settings["launch"], else
// its first timed case's (hand-made reports), else "stream" (every report written before graph
// launches existed). Compare, merge and history keep runs launched differently apart.
inline std::string launch_of(const Report& report) {
  if (auto it = report.run.settings.find("launch"); it != report.run.settings.end()) return it->second;
  for (const CaseRecord& c : report.cases)
    if (c.timing) return std::string(to_string(c.timing->launch));
  return std::string(kDefaultLaunchName);
}

}  // namespace kwb
