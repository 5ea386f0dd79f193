// Suite text for the tests, written one line per string so that the line numbers an error must
// name can be read off the test, and the SuiteError a text gets.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <optional>
#include <string>

#include "harness/plan/suite_file.hpp"
#include "harness/plan/suite_plan.hpp"

namespace kwb::test {

// Lines joined with '\n': the first string is line 1.
inline std::string yaml_lines(std::initializer_list<std::string> lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// The SuiteError that parsing (and, with `plan`, planning and the thresholds' op names) gives;
// nullopt, with a test failure, when none is thrown.
inline std::optional<SuiteError> suite_error(const std::string& text, bool plan = false) {
  try {
    const SuiteFile s = parse_suite(text, "suites/t.yaml");
    if (plan) {
      plan_suite(s, Registry::instance());
      suite_info(s, Registry::instance());
    }
  } catch (const SuiteError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a SuiteError for:\n" << text;
  return std::nullopt;
}

// The error names the file, line, column and key, in the message users see.
inline ::testing::AssertionResult At(const std::optional<SuiteError>& e, int line, int column, const std::string& key) {
  if (!e) return ::testing::AssertionFailure() << "no error";
  const std::string prefix = "suites/t.yaml:" + std::to_string(line) + ":" + std::to_string(column) + ": " +
                             (key.empty() ? "(top level)" : key) + ": ";
  if (e->at.line != line || e->at.column != column || e->at.key != key ||
      std::string(e->what()).rfind(prefix, 0) != 0)
    return ::testing::AssertionFailure() << "expected the error at \"" << prefix << "\", got \"" << e->what() << "\"";
  return ::testing::AssertionSuccess();
}

}  // namespace kwb::test
