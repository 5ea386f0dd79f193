// `kwb run --suite FILE`: the suite planned with the other run flags applied.
//
// How the flags combine with a suite (README, "Suites"):
//   --op, --variant, --dtype           narrow the suite's plan (they cannot add to it)
//   --mode, --flush, --preset, --seed  win over the suite's values when given
//   --datasheet-ceilings               wins over the suite's `ceilings` (nothing is measured)
//   --axis, --shapes                   refused: the suite's entries give the shapes
//   --max-cases                        applies to each entry and to the whole suite
//   everything else (--out, --device, --timer, ...) as without a suite
#pragma once

#include <string>
#include <vector>

#include "harness/plan/planner.hpp"
#include "harness/record/record.hpp"
#include "harness/session/session.hpp"

namespace kwb::cli {

// Which run flags were written on the command line (not left at their defaults).
struct GivenRunFlags {
  bool axis = false, shapes = false, mode = false, flush = false, preset = false, seed = false;
  bool datasheet_ceilings = false;
};

struct SuiteRun {
  std::vector<CaseRequest> cases;
  SuiteInfo info;
  CeilingsChoice ceilings = CeilingsChoice::cached_or_measured;
};

// `flags`: what the flags alone give (already checked by the run command). Throws SuiteError
// (file:line:column: key: ...) or PlanError; nothing has run.
SuiteRun plan_suite_run(const std::string& path, const PlanRequest& flags, const GivenRunFlags& given);

}  // namespace kwb::cli
