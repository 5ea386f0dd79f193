// The run flags applied to a suite; see run_suite.hpp for what each flag does beside --suite.
#include "cli/run_suite.hpp"

#include "harness/plan/suite_plan.hpp"

namespace kwb::cli {

SuiteRun plan_suite_run(const std::string& path, const PlanRequest& flags, const GivenRunFlags& given) {
  if (given.axis)
    throw PlanError("--axis cannot be combined with --suite: the suite's entries give the shapes; edit the "
                    "entry's shapes in " + path + ", or run without --suite");
  if (given.shapes)
    throw PlanError("--shapes cannot be combined with --suite: each entry says shapes: default or edge; edit " +
                    path + ", or run without --suite");
  const SuiteFile suite = load_suite(path);
  SuiteRunFlags run_flags;
  run_flags.ops = flags.ops;
  run_flags.variants = flags.variants;
  run_flags.dtypes = flags.dtypes;
  if (given.mode) run_flags.mode = flags.mode;
  if (given.flush) run_flags.flush = flags.flush;
  if (given.preset) run_flags.preset = flags.preset;
  if (given.seed) run_flags.seed = flags.seed;
  run_flags.include_test_variants = flags.include_test_variants;
  run_flags.max_cases = flags.max_cases;

  SuiteRun run;
  run.cases = plan_suite(suite, Registry::instance(), run_flags);
  run.info = suite_info(suite, Registry::instance());
  if (given.datasheet_ceilings || suite.ceilings == SuiteCeilings::datasheet) run.ceilings = CeilingsChoice::datasheet;
  else if (suite.ceilings == SuiteCeilings::measure) run.ceilings = CeilingsChoice::measure_fresh;
  return run;
}

}  // namespace kwb::cli
