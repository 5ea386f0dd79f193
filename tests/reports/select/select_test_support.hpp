// Shared by the selection tests: hand-made cases whose timing is given as median, p10 and p90 (as
// in the committed reports, whose sample arrays are dropped) or as per-sample arrays.
#pragma once

#include <string>
#include <vector>

#include "harness/record/json_report.hpp"
#include "tests/reports/compare/compare_test_support.hpp"

namespace kwb::test {

// A passed, timed bf16 case at rows x 4096 with only summary statistics (no samples).
inline CaseRecord summary_case(const std::string& op, const std::string& variant, std::int64_t rows, double median_us,
                               double p10_us, double p90_us, Role role = Role::fused) {
  CaseRecord c = timed_case(op, variant, rows, {median_us});
  c.role = role;
  c.timing->samples_us.clear();
  c.timing->span.count = 50;
  c.timing->span.median = median_us;
  c.timing->span.p10 = p10_us;
  c.timing->span.p90 = p90_us;
  return c;
}

// A case of the group that is not a candidate: failed, skipped or not verified, with a reason.
inline CaseRecord excluded_case(const std::string& op, const std::string& variant, std::int64_t rows,
                                Disposition disposition, const std::string& reason) {
  CaseRecord c = timed_case(op, variant, rows, {}, disposition);
  if (disposition != Disposition::failed) c.timing.reset();  // skipped and unverified cases are not timed
  c.reason = reason;
  return c;
}

}  // namespace kwb::test
