// Which variant to use per shape: the fastest verified variant of every (op, dtype, shape, mode)
// group of a report, its margin over the next fastest, and whether that margin is above the noise.
//
// A pure function of a report (no I/O, no formatting), shared by `kwb select` (its table, JSON and
// Markdown) and the review report's "Fastest variant per shape" section, so the two never disagree.
//
// Candidates are the cases that passed verification and were timed; every tunable configuration
// of a variant is a candidate of its own (the case identity names it). Everything else in a group
// is counted as excluded, by disposition and by reason.
//
// Is the win clear? When both the winner and the runner-up carry per-sample arrays, the compare
// module's verdict decides (reports/compare/decision.hpp: the runner-up must be "slower" than the winner,
// bootstrap interval of the ratio beyond the margin band and Mann-Whitney p < 0.01). Reports whose
// sample arrays were dropped (the committed samples) fall back to the p10-p90 ranges: clear only when
// the winner's p90 lies below the runner-up's p10. Either way a margin under `min_margin` is never
// clear. The entry says which rule decided.
//
// Determinism: with SelectSettings::deterministic_only, a variant whose output may vary from run
// to run (or whose behaviour is unknown) is no candidate; it is counted as excluded, with why.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reports/compare/decision.hpp"
#include "harness/record/record.hpp"

namespace kwb::select {

// Whether a variant's output may differ in its last bits from run to run (Variant::
// varies_run_to_run: float atomics, rows handed out by demand); nullopt where it is not known
// (a variant this build's catalogue does not hold). The CLI answers from the registry; the
// selection itself stays a pure function of what it is given.
using VariesRunToRun = std::function<std::optional<bool>(const std::string& op, const std::string& variant)>;

struct SelectSettings {
  // The smallest margin (runner-up / winner - 1) called clear, as a fraction: 0.01 = 1%.
  double min_margin = 0.01;
  DecisionSettings decision;  // its threshold is set to min_margin when used
  // Asked of every candidate, so that each says whether it varies; unset: nothing is known.
  VariesRunToRun varies_run_to_run;
  // Only variants known to write the same bits every run are candidates (a training stack that
  // must reproduce a run): the others, and those not known, are excluded with the reason.
  bool deterministic_only = false;
};

// One timed, verified case of a group.
struct Candidate {
  std::string variant;
  Role role = Role::fused;
  TunableValues tunables;  // the configuration measured; empty for a variant without tunables
  std::string case_name;   // the case identity (nvtx_range)
  std::string math;        // the arithmetic it ran in (CaseRecord::math); empty: not recorded
  double median_us = 0, p10_us = 0, p90_us = 0;
  std::vector<double> samples_us;  // empty when the report dropped them
  std::optional<bool> varies_run_to_run;  // SelectSettings::varies_run_to_run's answer; nullopt: unknown
};

// "fused_v2_vec16" or "test_atomic_scatter[block=256]": a variant and its configuration.
std::string candidate_label(const Candidate& c);

// How the clear / within-noise verdict was reached.
enum class NoiseRule { single_candidate, min_margin, samples, p10_p90 };
std::string_view to_string(NoiseRule rule);

struct SelectionEntry {
  std::string op;
  DType dtype = DType::fp32;
  Mode mode = Mode::cold;
  Shape shape;
  std::vector<Candidate> ranked;  // fastest first; ties keep plan order
  // ranked[1].median / ranked[0].median; 0 with a single candidate
  double margin_ratio = 0;
  double margin_pct = 0;   // (margin_ratio - 1) * 100
  bool clear = false;      // a single candidate is clear: nothing to confuse it with
  NoiseRule rule = NoiseRule::single_candidate;
  std::string verdict_reason;  // one sentence: why clear or within noise
  // The group's fastest passed baseline (Role::baseline); absent when none passed and was timed.
  std::optional<Candidate> baseline;
  std::optional<double> speedup_vs_baseline;  // baseline median / winner median
  // Cases of the group that are not candidates: by kind ("failed", "skipped", "not verified",
  // "not timed"; under deterministic_only also "varies run to run" and "run to run unknown") and
  // by reason text (the record's reason; the kind when it has none).
  std::map<std::string, int> excluded;
  std::map<std::string, int> excluded_reasons;

  const Candidate& winner() const { return ranked.front(); }
  const Candidate* runner_up() const { return ranked.size() > 1 ? &ranked[1] : nullptr; }
  int excluded_total() const;
};

// A group with no candidate (no case passed and was timed, or, under deterministic_only, none of
// a variant known to write the same bits every run): nothing to select, and why.
struct UnselectedGroup {
  std::string op;
  DType dtype = DType::fp32;
  Mode mode = Mode::cold;
  Shape shape;
  std::map<std::string, int> excluded;
  std::map<std::string, int> excluded_reasons;
};

// Per op: how many groups each variant wins, most wins first (ties by name).
struct OpWins {
  std::string op;
  std::vector<std::pair<std::string, int>> wins;
  int groups = 0;
};

struct Selection {
  std::vector<SelectionEntry> entries;       // plan order of each group's first case
  std::vector<UnselectedGroup> unselected;   // same order
  std::vector<OpWins> per_op;                // ops in plan order
  bool used_samples = false;   // some verdict came from per-sample arrays
  bool used_p10_p90 = false;   // some verdict fell back to the p10-p90 ranges
};

// `run` supplies the mode of untimed cases (the run's "mode" setting; cold when absent).
Selection select_fastest(const RunInfo& run, const std::vector<CaseRecord>& cases,
                         const SelectSettings& settings = {});

}  // namespace kwb::select
