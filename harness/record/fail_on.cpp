// The names of the classes a compare gate may also fail on (see fail_on.hpp).
#include "harness/record/fail_on.hpp"

namespace kwb {

std::string_view to_string(FailOnClass c) {
  switch (c) {
    case FailOnClass::ambiguous: return "ambiguous";
    case FailOnClass::missing: return "missing";
    case FailOnClass::skipped: return "skipped";
  }
  return "?";
}

std::optional<FailOnClass> parse_fail_on_class(std::string_view name) {
  for (FailOnClass c : kFailOnClasses)
    if (to_string(c) == name) return c;
  return std::nullopt;
}

std::vector<std::string> fail_on_class_names() {
  std::vector<std::string> out;
  for (FailOnClass c : kFailOnClasses) out.emplace_back(to_string(c));
  return out;
}

}  // namespace kwb
