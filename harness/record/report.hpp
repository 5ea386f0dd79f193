// A run's report as data: its environment (RunInfo) and one record per case, in plan order.
// What every stage and report that passes a report around needs; reading and writing it as JSON
// is json_report.hpp's business, CSV csv_report.hpp's.
#pragma once

#include <vector>

#include "harness/record/record.hpp"

namespace kwb {

inline constexpr const char* kReportSchema = "kwb.report/2";

struct Report {
  RunInfo run;
  std::vector<CaseRecord> cases;
};

}  // namespace kwb
