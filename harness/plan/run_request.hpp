// The one request layer: the settings of a run, as a person gives them on any front end, become
// the planned cases and the run's settings here, for `kwb run`, `kwb tune` (through the run
// command) and the app's live run alike.
//
// Names stay names (ops, dtypes, mode, flush, preset), axes are written in the --axis grammar
// (harness/plan/axes.hpp) and numbers as text: all of it is checked here, once, in the order
// below, before anything runs. A refusal is a SettingError naming the setting (each front end
// words it its own way: harness/plan/setting_error.hpp), a SuiteError naming the suite file's
// line, or a TuningError naming the tuning file. What only one front end has (the command line's
// output folder, devices, timer, shards and resume; the app's panel) stays with it.
//
// How the settings combine with a suite file (docs/guide.md, "Suites"):
//   op, variant, dtype          narrow the suite's plan (they cannot add to it)
//   mode, flush, launch,        win over the suite's values when given
//   preset, seed
//   datasheet-ceilings          wins over the suite's `ceilings` (nothing is measured)
//   axis, shapes                refused: the suite's entries give the shapes
//   max-cases                   applies to each entry and to the whole suite
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/plan/ceilings_choice.hpp"
#include "harness/plan/counter_sets.hpp"
#include "harness/plan/planner.hpp"
#include "harness/plan/tuning_file.hpp"
#include "harness/record/record.hpp"

namespace kwb {

// Which settings were given rather than left at their defaults: a suite's values yield only to
// those (and axis and shapes are refused beside a suite only when given).
struct GivenSettings {
  bool axis = false, shapes = false, mode = false, flush = false, preset = false, seed = false, launch = false;
};

// A run's settings as given. Defaults are those of `kwb run`.
struct RunSettings {
  std::vector<std::string> ops, variants, dtypes;  // names; empty: all (a repeat counts once)
  std::vector<std::string> axes;                   // NAME=VALUES each; empty: the ops' own shapes
  std::string shapes = "default";                  // default | edge: shapes of ops no axis names
  std::string mode = "cold", flush = "dirty", preset = "default";
  std::string launch = "stream";                   // stream | graph: how each sample is launched
  std::string seed = "1";                          // 0 to 2^64-1
  std::string max_cases = std::to_string(PlanRequest::kDefaultMaxCases);
  bool include_test_variants = false;
  bool datasheet_ceilings = false;
  std::string suite;                 // a suite file: the plan comes from it
  std::vector<std::string> tuning;   // tune.json files whose best configurations apply
  // Hardware counters after timing: set names and extra metrics (harness/plan/counter_sets.hpp).
  std::vector<std::string> counter_sets, metrics;
  GivenSettings given;
};

// The plan and the run's settings that come with it.
struct PlannedRun {
  PlanRequest request;             // the settings, parsed (a suite's entries have their own)
  std::vector<CaseRequest> cases;  // in plan order, indices from 0
  std::optional<SuiteInfo> suite;  // the suite the plan came from, for the report
  CeilingsChoice ceilings = CeilingsChoice::cached_or_measured;
  // The tuning files read, in the order given: each names the GPU it was tuned on, which the run
  // must find (a front end tells the session, naming the file its way).
  std::vector<TuningTable> tuning;
  std::string tuning_note;  // the report's settings["tuning"]; empty without tuning files
  // The counters every case collects (empty: none); whether the GPU's chip has them is checked
  // by the session against the worker's chip, before the first case.
  CounterRequest counters;
};

// Settings -> plan. Throws SettingError, SuiteError or TuningError (all std::invalid_argument);
// nothing has run. An empty plan is returned as such: whether it is an error depends on the
// front end (a shard of a plan may hold no case); no_case_selected() is the refusal.
PlannedRun plan_run(const RunSettings& settings, const Registry& registry);

// The refusal of a plan that selects no case.
SettingError no_case_selected();

// The settings' own checks, without planning: names, the --axis grammar, numbers. Throws
// SettingError. (plan_run begins with it.)
PlanRequest plan_request_from(const RunSettings& settings, const Registry& registry);

// Every planned case is held in memory with its shape: a million is about 0.5 GB.
inline constexpr std::size_t kMaxCasesCeiling = 1'000'000;

}  // namespace kwb
