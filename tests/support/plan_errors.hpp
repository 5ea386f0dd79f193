// Assertions shared by the planner tests: the PlanError a request gets, and whether a message
// mentions what it should (a failure prints the whole message).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "plan/planner.hpp"

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

inline ::testing::AssertionResult Mentions(const std::string& message, std::string_view part) {
  if (message.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "message \"" << message << "\" does not mention \"" << part << "\"";
}

}  // namespace kwb::test
