// The PlanError a request gets, for the planner tests (with Mentions from mentions.hpp).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "harness/plan/planner.hpp"
#include "tests/support/mentions.hpp"

namespace kwb::test {

// The PlanError message for `request`; a test failure if none is thrown.
inline std::string plan_error(const PlanRequest& request, const Registry& registry = Registry::instance()) {
  try {
    plan_cases(request, registry);
  } catch (const PlanError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a PlanError";
  return {};
}

}  // namespace kwb::test
