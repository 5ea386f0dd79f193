// The comparison of two reports as data: every matched case with its ratio, interval, p-value and
// outcome, the unmatched cases, the environment differences, and the summary per op. The terminal
// table, JUnit XML and Markdown are all written from this one model (sinks/), so they never disagree.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reports/compare/decision.hpp"
#include "reports/compare/environment_diff.hpp"
#include "harness/record/json_report.hpp"

namespace kwb {

// What became of one matched case. `failed` is NEW's verification failure, fault or timeout,
// whatever the timing; `not_timed` is a case either side has no timing for (skipped, failed in
// BASE, a verify-only run): reported, never a regression.
enum class CaseOutcome { failed, slower, faster, ambiguous, same, not_timed };
std::string_view to_string(CaseOutcome o);

struct ComparedCase {
  std::string key;  // the case identity
  std::string op;
  Disposition base_disposition = Disposition::passed, new_disposition = Disposition::passed;
  CaseOutcome outcome = CaseOutcome::not_timed;
  Decision decision;   // meaningful when both sides are timed
  double threshold = 0;  // the relative threshold this op was judged with
  std::string note;    // the reason: NEW's failure reason, why not timed, or the decision's reason
  bool timed() const { return outcome != CaseOutcome::not_timed && outcome != CaseOutcome::failed; }
  bool has_ratio() const;  // both medians known and positive
};

struct OpSummary {
  std::string op;
  std::map<CaseOutcome, int> counts;
  int unverified = 0;             // NEW ran it without verification
  int ratios = 0;                 // cases in the geometric mean
  double geomean_ratio = 0;       // NEW/BASE over those cases; NaN when there are none
};

struct CompareInputs {
  const Report* base = nullptr;
  const Report* next = nullptr;
  std::string base_name = "BASE", new_name = "NEW";  // file names, for messages and outputs
  // Per-op thresholds from NEW's suite ("default" applies to the ops not named); the flag's
  // threshold in `settings` applies where the suite names neither.
  std::map<std::string, double> suite_thresholds;
  DecisionSettings settings;
};

struct CompareReport {
  std::string base_name, new_name;
  DecisionSettings settings;
  std::vector<EnvDifference> environment;
  std::vector<ComparedCase> cases;       // NEW's order
  std::vector<std::string> only_in_base, only_in_new;  // case identities
  std::vector<OpSummary> ops;            // in order of first appearance in NEW
  OpSummary overall;                     // op = "(all)"
  int skipped_in_new = 0;                // NEW skipped the case (device, shape too large...)

  bool regression() const;  // any case slower or failed in NEW
};

// Throws ReportError for a case identity that appears twice in one report.
CompareReport compare_reports(const CompareInputs& inputs);

// The threshold applied to `op`: the suite's entry for it, else the suite's "default", else `flag`.
double threshold_for(const std::string& op, const std::map<std::string, double>& suite, double flag);

// The cases sorted for reading: failures first, then by size of change (|log ratio|), largest first.
std::vector<const ComparedCase*> by_largest_change(const CompareReport& report);

}  // namespace kwb
