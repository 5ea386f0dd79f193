// Where a compare gate's thresholds and fail-on classes come from, and the sentence that says so.
//
// BASE is the accepted reference, so its suite sets the rules, never NEW's: a change under test
// must not be able to loosen the gate it is judged by. The order, for thresholds and fail-on alike:
//   1. the flag (`--threshold` applies to every op; `--fail-on` replaces the suite's list);
//   2. BASE's run.suite (per-op thresholds, then its default; its compare.fail_on);
//   3. 3% for every op; nothing besides slower and failed cases.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/record/fail_on.hpp"
#include "harness/record/json_report.hpp"

namespace kwb {

inline constexpr double kDefaultCompareThreshold = 0.03;

struct ThresholdChoice {
  std::map<std::string, double> per_op;  // op (or "default") -> fraction; empty under the flag
  double fallback = kDefaultCompareThreshold;
  std::string source;  // "thresholds: 1% for every op (--threshold)"
};

ThresholdChoice choose_thresholds(std::optional<double> flag, const Report& base);

struct FailOnChoice {
  std::vector<FailOnClass> classes;
  std::string source;  // "fails on slower and failed cases, and on missing, skipped (BASE's suite 'nightly')"
};

FailOnChoice choose_fail_on(const std::optional<std::vector<FailOnClass>>& flag, const Report& base);

}  // namespace kwb
