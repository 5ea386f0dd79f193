// The gate's thresholds and fail-on classes: flag, then BASE's suite, then defaults (see gate_settings.hpp).
#include "reports/compare/gate_settings.hpp"

#include <fmt/format.h>

namespace kwb {
namespace {

std::string percent(double fraction) { return fmt::format("{:.3g}%", fraction * 100); }

std::string suite_name(const SuiteInfo& s) { return fmt::format("BASE's suite '{}' ({})", s.name, s.path); }

}  // namespace

ThresholdChoice choose_thresholds(std::optional<double> flag, const Report& base) {
  ThresholdChoice c;
  if (flag) {
    c.fallback = *flag;
    c.source = fmt::format("thresholds: {} for every op (--threshold)", percent(*flag));
    return c;
  }
  const auto& suite = base.run.suite;
  if (!suite) {
    c.source = fmt::format("thresholds: {} for every op (the default: no --threshold, and BASE was not run from a "
                           "suite)", percent(c.fallback));
    return c;
  }
  c.per_op = suite->op_thresholds;
  c.per_op["default"] = suite->default_threshold;
  std::string list = fmt::format("{} by default", percent(suite->default_threshold));
  for (const auto& [op, fraction] : suite->op_thresholds) list += fmt::format(", {} for {}", percent(fraction), op);
  c.source = fmt::format("thresholds: {} (from {}; --threshold overrides)", list, suite_name(*suite));
  return c;
}

FailOnChoice choose_fail_on(const std::optional<std::vector<FailOnClass>>& flag, const Report& base) {
  FailOnChoice c;
  std::string from;
  if (flag) {
    c.classes = *flag;
    from = "--fail-on";
  } else if (base.run.suite && !base.run.suite->compare_fail_on.empty()) {
    c.classes = base.run.suite->compare_fail_on;
    from = suite_name(*base.run.suite);
  }
  std::string classes;
  for (FailOnClass k : c.classes) classes += fmt::format("{}{}", classes.empty() ? "" : ", ", to_string(k));
  if (!classes.empty())
    c.source = fmt::format("fails on: slower and failed cases, and {} (from {})", classes, from);
  else
    c.source = flag ? "fails on: slower and failed cases only (--fail-on none)"
                    : "fails on: slower and failed cases only (--fail-on adds ambiguous, missing, skipped)";
  return c;
}

}  // namespace kwb
