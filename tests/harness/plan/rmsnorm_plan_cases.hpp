// The planner tests' subject: rmsnorm_fwd of the real catalogue, its variants, and plans of it
// (planner_test.cpp, case_memory_test.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/catalogue/registry.hpp"
#include "harness/plan/planner.hpp"

namespace kwb::rmsnorm_plan {

inline constexpr const char* kOp = "rmsnorm_fwd";
inline constexpr const char* kBaseline = "baseline_eager_8_launches";
inline const std::vector<std::string> kOrdinary = {kBaseline, "fused_v1_row_per_block", "fused_v2_vec16"};
inline const std::vector<std::string> kTestOnly = {"test_fault_illegal_address", "test_fault_device_assert",
                                                   "test_hang"};

inline const Registry& registry() { return Registry::instance(); }

inline PlanRequest rmsnorm_request() {
  PlanRequest r;
  r.ops = {kOp};
  return r;
}

inline Shape rmsnorm_shape(std::int64_t rows, std::int64_t cols) { return Shape{{{"rows", rows}, {"cols", cols}}}; }

// One case of rmsnorm_fwd's `variant` at rows x cols.
inline CaseRequest one_case(const std::string& variant, DType dtype, std::int64_t rows, std::int64_t cols) {
  PlanRequest r = rmsnorm_request();
  r.variants = {variant};
  r.dtypes = {dtype};
  r.axes = {parse_axis_assignment("rows=" + std::to_string(rows)),
            parse_axis_assignment("cols=" + std::to_string(cols))};
  r.include_test_variants = variant.rfind("test_", 0) == 0;
  auto cases = plan_cases(r, registry());
  EXPECT_EQ(cases.size(), 1u);
  return cases.at(0);
}

}  // namespace kwb::rmsnorm_plan
