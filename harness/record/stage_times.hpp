// Where a run's time went: each case's host stages (CaseStageTimes, measured in the worker) and
// the session's own (RunInfo::session_stages_s), to and from JSON with the record codec's
// strictness, and summed into the table `kwb run --time-report` prints.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/record/json_node.hpp"
#include "harness/record/record.hpp"

namespace kwb {

nlohmann::ordered_json to_json(const CaseStageTimes& stages);
CaseStageTimes stage_times_from_json(const json_read::Node& n);  // throws ReportError naming the path

nlohmann::ordered_json session_stages_json(const std::vector<std::pair<std::string, double>>& stages);
std::vector<std::pair<std::string, double>> session_stages_from_json(const json_read::Node& n);

// One line of the breakdown: a stage, its seconds summed over the run (over every GPU's worker
// for the case stages: on several GPUs they can add up to more than the wall time).
struct TimeReportLine {
  std::string stage;
  double seconds = 0;
  std::string what;  // what the stage covers, in a few words
};

// One op's share: where a sweep's time goes op by op (an op verified in full spends it on the
// host, another on timing), and how many of its cases had their oracle from the cache.
struct TimeReportOp {
  std::string op;
  int cases = 0;
  double total_s = 0;  // every wall stage of its cases (the background oracle left out)
  double inputs_s = 0, oracle_s = 0, verify_s = 0, measure_s = 0;
  double oracle_background_s = 0;
  int oracle_from_cache = 0;  // cases whose verification read the oracle cache
};

struct TimeReport {
  std::vector<TimeReportLine> session;  // start workers, ceilings, cases, reports
  std::vector<TimeReportLine> cases;    // the case stages summed over every case with stages
  std::vector<TimeReportOp> ops;        // by op, the longest first
  double wall_s = 0;                    // the session stages' sum
  int cases_with_stages = 0;
  int groups_prepared = 0;  // cases whose inputs and oracle were prepared (the first of each group)
};

// The ops format_time_report lists (the longest); the rest are summed in one line.
inline constexpr std::size_t kTimeReportOps = 8;

TimeReport time_report(const std::vector<std::pair<std::string, double>>& session_stages_s,
                       const std::vector<CaseRecord>& cases);

// The report as a plain-text table: stage, seconds, share of the wall time, what it covers.
std::string format_time_report(const TimeReport& report);

}  // namespace kwb
