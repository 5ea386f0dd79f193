// The comparison of two reports as data: every matched case with its ratio, interval, p-value and
// outcome, the unmatched cases, the environment differences, and the summary per op. The terminal
// table, JUnit XML and Markdown are all written from this one model (sinks/), so they never disagree.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/record/fail_on.hpp"
#include "harness/record/json_report.hpp"
#include "reports/compare/decision.hpp"
#include "reports/compare/environment_diff.hpp"
#include "reports/compare/run_spread.hpp"

namespace kwb {

// What became of one matched case. `failed` is NEW's verification failure, fault or timeout,
// whatever the timing; `not_timed` is a case either side has no timing for (skipped, failed in
// BASE, a verify-only run): reported, never a regression.
enum class CaseOutcome { failed, slower, faster, ambiguous, same, not_timed };
std::string_view to_string(CaseOutcome o);

// The verdict the reports gave a case that `kwb compare --confirm` then re-measured: kept beside
// the confirmed verdict that replaced it, so that every output can show both.
struct FirstVerdict {
  CaseOutcome outcome = CaseOutcome::ambiguous;
  bool throttled = false;
  Decision decision;
  std::string note;
};

struct ComparedCase {
  std::string key;  // the case identity
  std::string op;
  Disposition base_disposition = Disposition::passed, new_disposition = Disposition::passed;
  CaseOutcome outcome = CaseOutcome::not_timed;
  Decision decision;   // meaningful when both sides are timed
  double threshold = 0;  // the relative threshold this op was judged with
  std::string note;    // the reason: NEW's failure reason, why not timed, or the decision's reason
  // Ambiguous because a side was throttled or the clocks moved (clock_rule.hpp): the note says which.
  bool throttled = false;
  // Timed on both sides, but a side has no per-sample times (timing.samples_us empty).
  bool base_lacks_samples = false, new_lacks_samples = false;
  // Re-measured by --confirm (reports/compare/confirm_decision.hpp): outcome, decision and note
  // above are then the confirmed ones, from `confirm_rounds` interleaved rounds on this machine's
  // GPU, and `first` holds what the reports alone said.
  std::optional<FirstVerdict> first;
  int confirm_rounds = 0;  // rounds timed on both sides
  bool timed() const { return outcome != CaseOutcome::not_timed && outcome != CaseOutcome::failed; }
  bool has_ratio() const;  // both medians known and positive
  // The outcome as every output writes it: "ambiguous (throttled)" for a throttled case, "same
  // (confirmed)" for one --confirm re-measured.
  std::string outcome_label() const;
  // The ratio NEW/BASE of the reports' medians (the first verdict's for a confirmed case): what
  // the per-op geometric means average, so re-measuring a few cases does not move them.
  double reports_ratio() const { return first ? first->decision.ratio.ratio : decision.ratio.ratio; }
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
  // Per-op thresholds ("default" applies to the ops not named); settings.threshold applies where
  // this names neither. gate_settings.hpp fills both, and the source, from the flag or BASE's suite.
  std::map<std::string, double> suite_thresholds;
  std::string threshold_source;  // where the thresholds came from, said once by every output
  DecisionSettings settings;
  // What fails the gate besides slower and failed cases, and where that came from.
  std::vector<FailOnClass> fail_on;
  std::string fail_on_source;
  // Case identity -> run-to-run spread from other runs of BASE's build (run_spread.hpp).
  std::map<std::string, CaseSpread> spreads;
  int base_runs = 0;     // how many other runs of BASE (--base-runs) gave `spreads`
  int history_runs = 0;  // how many stored runs of BASE's build (--history) gave `spreads`
  std::string history_name;  // the history database, for the outputs
};

// How `kwb compare --confirm` re-measured the suspects, for the outputs' gate lines.
struct ConfirmInfo {
  int cases = 0;   // suspects re-measured
  int rounds = 0;  // rounds asked per case
  std::string device;                  // this machine's GPU
  std::string base_build, new_build;   // "./build/kwb (abc123)": the kwb that measured each side
};

struct CompareReport {
  std::string base_name, new_name;
  DecisionSettings settings;
  std::string threshold_source;
  std::vector<FailOnClass> fail_on;
  std::string fail_on_source;
  int base_runs = 0;                     // other runs of BASE that gave run-to-run spreads
  int history_runs = 0;                  // stored runs of BASE's build that did (--history)
  std::string history_name;
  std::vector<EnvDifference> environment;
  std::vector<ComparedCase> cases;       // NEW's order
  std::vector<std::string> only_in_base, only_in_new;  // case identities
  std::vector<OpSummary> ops;            // in order of first appearance in NEW
  OpSummary overall;                     // op = "(all)"
  int skipped_in_new = 0;                // NEW skipped the case (device, shape too large...)
  std::vector<std::string> newly_skipped;  // cases NEW skipped that BASE timed
  std::optional<ConfirmInfo> confirm;    // present when --confirm re-measured cases

  bool regression() const;  // any case slower or failed in NEW
  bool fails_on(FailOnClass c) const;
  // The --fail-on classes present, in words ("2 ambiguous", "1 missing from NEW"); empty when none.
  std::vector<std::string> fail_on_hits() const;
  bool fails() const { return regression() || !fail_on_hits().empty(); }  // exit 1
};

// Throws ReportError for a case identity that appears twice in one report.
CompareReport compare_reports(const CompareInputs& inputs);

// Rebuilds the per-op and overall summaries from the cases' outcomes (after --confirm replaced some).
void summarise(CompareReport& report);

// The threshold applied to `op`: the suite's entry for it, else the suite's "default", else `flag`.
double threshold_for(const std::string& op, const std::map<std::string, double>& suite, double flag);

// Why the gate cannot judge these reports: a case both sides timed whose per-sample times one side
// lacks (the first such case, how many more, why the gate needs them and how to get them); nothing
// when every judged case has them. `kwb compare` refuses such reports (exit 2); the app still
// shows their ratios.
std::optional<std::string> missing_samples_problem(const CompareReport& report);

// The cases sorted for reading: failures first, then by size of change (|log ratio|), largest first.
std::vector<const ComparedCase*> by_largest_change(const CompareReport& report);

}  // namespace kwb
