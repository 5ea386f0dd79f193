// Whether a message or a command's output mentions what it should; a failure prints all of it.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "tests/support/command.hpp"

namespace kwb::test {

inline ::testing::AssertionResult Mentions(const std::string& message, std::string_view part) {
  if (message.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "message \"" << message << "\" does not mention \"" << part << "\"";
}

inline ::testing::AssertionResult Mentions(const CommandResult& r, std::string_view part) {
  if (r.output.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "output does not mention \"" << part << "\":\n" << r.output;
}

}  // namespace kwb::test
