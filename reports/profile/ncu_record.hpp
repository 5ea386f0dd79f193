// Where Nsight Compute's figures of a case go: into its record, as CaseRecord::ncu_counters.
//
// A report that holds the case gets them in place: its JSON is read, checked as a report, the
// case's "ncu_counters" set and the file replaced atomically; every other key is kept as it was
// (those this build does not know included), so nothing measured is lost. A kwb.report/2 report
// becomes /3 (ncu_counters is a /3 field). Without a report, the record of the run made under
// ncu is written as a report of its own.
#pragma once

#include <filesystem>
#include <string>

#include "harness/record/counters.hpp"
#include "harness/record/report.hpp"

namespace kwb {

// Throws ReportError when the file cannot be read or is not a report, ProfileCaseError when it
// holds no case `identity` (the file is then left as it was).
void write_ncu_counters_into_report(const std::filesystem::path& report_path, const std::string& identity,
                                    const CaseCounters& counters);

// `report` with only the case `identity`, holding `counters` as its ncu_counters, written
// atomically to `path`. Throws ProfileCaseError when the report holds no such case.
void write_ncu_record(const std::filesystem::path& path, Report report, const std::string& identity,
                      const CaseCounters& counters, const std::string& report_path_for_messages);

}  // namespace kwb
