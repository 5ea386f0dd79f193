// What else fails a `kwb compare` gate besides slower and failed cases: the vocabulary a suite
// file names (`compare: {fail_on: [missing, skipped]}`), a report carries in run.suite, and
// `kwb compare --fail-on` takes. It lives here, with the records, because the suite reader
// (harness/plan), the report codec and compare (reports/compare) all need the same names.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kwb {

enum class FailOnClass {
  ambiguous,  // a matched case whose verdict is ambiguous (throttled ones included)
  missing,    // a case of BASE that NEW does not hold
  skipped,    // a case NEW skipped that BASE timed
};

inline constexpr FailOnClass kFailOnClasses[] = {FailOnClass::ambiguous, FailOnClass::missing, FailOnClass::skipped};

std::string_view to_string(FailOnClass c);
std::optional<FailOnClass> parse_fail_on_class(std::string_view name);

// "ambiguous, missing, skipped" (the names, for messages and "did you mean").
std::vector<std::string> fail_on_class_names();

}  // namespace kwb
