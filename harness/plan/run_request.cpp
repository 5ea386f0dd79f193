// Settings -> plan in named phases: the settings' own checks, the plan (from the settings or a
// suite file with the settings applied), then the tuning files. See run_request.hpp.
#include "harness/plan/run_request.hpp"

#include <fmt/format.h>

#include "harness/plan/setting_values.hpp"
#include "harness/plan/suite_plan.hpp"
#include "harness/record/stats.hpp"

namespace kwb {
namespace {

std::vector<DType> dtypes_from(const std::vector<std::string>& names) {
  std::vector<DType> dtypes;
  for (const auto& d : without_repeats(names)) {
    const auto dtype = parse_dtype(d);
    if (!dtype)
      throw SettingError(Setting::dtype, SettingText(Setting::dtype, ": unknown dtype '" + d +
                                                                         "'; use fp32, fp16 or bf16"));
    dtypes.push_back(*dtype);
  }
  return dtypes;
}

std::vector<AxisAssignment> axes_from(const std::vector<std::string>& texts, const Registry& registry) {
  std::vector<AxisAssignment> axes;
  for (const auto& a : texts) {
    try {
      axes.push_back(parse_axis_for(a, registry));
    } catch (const AxisParseError& e) {
      throw SettingError(Setting::axis, SettingText(Setting::axis, std::string(": ") + e.what()));
    }
  }
  return axes;
}

ShapeSet shape_set_from(const std::string& text) {
  if (text == "edge") return ShapeSet::edge;
  if (text == "default") return ShapeSet::standard;
  throw SettingError(Setting::shapes, SettingText(Setting::shapes, ": unknown set '" + text +
                                                                       "'; use default (realistic sizes) or edge "
                                                                       "(small, odd sizes)"));
}

Mode mode_from(const std::string& text) {
  const auto mode = parse_mode(text);
  if (!mode)
    throw SettingError(Setting::mode, SettingText(Setting::mode, ": unknown mode '" + text +
                                                                     "'; use cold (L2 flushed before every sample) "
                                                                     "or hot"));
  return *mode;
}

LaunchKind launch_from(const std::string& text) {
  const auto launch = parse_launch_kind(text);
  if (!launch)
    throw SettingError(Setting::launch, SettingText(Setting::launch, ": unknown launch '" + text +
                                                                         "'; use stream (the variant's launches, each "
                                                                         "sample as a program issues it) or graph (one "
                                                                         "sample captured in a CUDA graph and replayed)"));
  return *launch;
}

std::string preset_from(const std::string& text) {
  if (!stopping_preset(text) && text != kVerifyOnlyPreset)
    throw SettingError(Setting::preset, SettingText(Setting::preset, ": unknown preset '" + text +
                                                                         "'; use quick, default or precise (or "
                                                                         "verify: check, do not time)"));
  return text;
}

std::size_t max_cases_from(const std::string& text) {
  const std::size_t max_cases = parse_positive_count(Setting::max_cases, text);
  if (max_cases > kMaxCasesCeiling)
    throw SettingError(Setting::max_cases,
                       SettingText(Setting::max_cases,
                                   fmt::format(": {} is more than one run can plan (at most {}); split the sweep "
                                               "into several runs with narrower ",
                                               max_cases, kMaxCasesCeiling),
                                   Setting::axis, " ranges"));
  return max_cases;
}

// The suite file planned with the settings applied (the rules in run_request.hpp).
void plan_from_suite(const RunSettings& settings, const Registry& registry, PlannedRun& run) {
  const std::string& path = settings.suite;
  if (settings.given.axis)
    throw SettingError(Setting::axis, SettingText(Setting::axis, " cannot be combined with ", Setting::suite,
                                                  ": the suite's entries give the shapes; edit the entry's shapes "
                                                  "in " + path + ", or run without ",
                                                  Setting::suite));
  if (settings.given.shapes)
    throw SettingError(Setting::shapes, SettingText(Setting::shapes, " cannot be combined with ", Setting::suite,
                                                    ": each entry says shapes: default or edge; edit " + path +
                                                        ", or run without ",
                                                    Setting::suite));
  const SuiteFile suite = load_suite(path);
  const PlanRequest& given = run.request;
  SuiteRunFlags flags;
  flags.ops = given.ops;
  flags.variants = given.variants;
  flags.dtypes = given.dtypes;
  if (settings.given.mode) flags.mode = given.mode;
  if (settings.given.flush) flags.flush = given.flush;
  if (settings.given.launch) flags.launch = given.launch;
  if (settings.given.preset) flags.preset = given.preset;
  if (settings.given.seed) flags.seed = given.seed;
  flags.include_test_variants = given.include_test_variants;
  flags.max_cases = given.max_cases;

  run.cases = plan_suite(suite, registry, flags);
  run.suite = suite_info(suite, registry);
  if (settings.datasheet_ceilings || suite.ceilings == SuiteCeilings::datasheet)
    run.ceilings = CeilingsChoice::datasheet;
  else if (suite.ceilings == SuiteCeilings::measure)
    run.ceilings = CeilingsChoice::measure_fresh;
}

// Tuned configurations replace the declared defaults (harness/plan/tuning_file.hpp).
void apply_tuning_files(const std::vector<std::string>& paths, PlannedRun& run) {
  std::string files;
  for (const auto& path : without_repeats(paths)) {
    run.tuning.push_back(read_tuning_file(path));
    files += (files.empty() ? "" : ", ") + path;
  }
  const std::size_t changed = apply_tuning(run.cases, run.tuning, run.request.axes);
  run.tuning_note = fmt::format("{} ({} of {} cases take a tuned configuration)", files, changed, run.cases.size());
}

}  // namespace

PlanRequest plan_request_from(const RunSettings& settings, const Registry& registry) {
  PlanRequest r;
  r.ops = without_repeats(settings.ops);
  r.variants = without_repeats(settings.variants);
  r.dtypes = dtypes_from(settings.dtypes);
  r.axes = axes_from(settings.axes, registry);
  r.shape_set = shape_set_from(settings.shapes);
  r.mode = mode_from(settings.mode);
  r.flush = parse_flush_flag(settings.flush, r.mode);
  r.launch = launch_from(settings.launch);
  r.preset = preset_from(settings.preset);
  r.seed = parse_seed(Setting::seed, settings.seed);
  r.max_cases = max_cases_from(settings.max_cases);
  r.include_test_variants = settings.include_test_variants;
  return r;
}

PlannedRun plan_run(const RunSettings& settings, const Registry& registry) {
  PlannedRun run;
  run.request = plan_request_from(settings, registry);
  if (settings.datasheet_ceilings) run.ceilings = CeilingsChoice::datasheet;
  if (settings.suite.empty()) run.cases = plan_cases(run.request, registry);
  else plan_from_suite(settings, registry, run);
  if (!settings.tuning.empty()) apply_tuning_files(settings.tuning, run);
  run.counters = parse_counter_request(settings.counter_sets, settings.metrics);
  // Counter passes follow timing: a case checked and not timed collects none.
  if (!run.counters.empty())
    for (const CaseRequest& c : run.cases)
      if (c.preset == kVerifyOnlyPreset)
        throw SettingError(Setting::counters,
                           SettingText(Setting::counters, ": the preset verify checks cases without timing them, and "
                                                          "counters are read after timing; drop ",
                                       Setting::counters, " or choose a timing ", Setting::preset,
                                       " (quick, default, precise)"));
  for (CaseRequest& c : run.cases) {
    c.counter_sets = run.counters.sets;
    c.counter_metrics = run.counters.metrics;
  }
  return run;
}

SettingError no_case_selected() {
  return SettingError(Setting::op, SettingText("the filters select no case (check ", Setting::op, ", ",
                                               Setting::variant, " and ", Setting::dtype, " against `kwb list`)"));
}

}  // namespace kwb
