// The test-only slowdown switch (test_slowdown.hpp): reading it from the environment.
#include "harness/worker/test_slowdown.hpp"

#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

namespace kwb {
namespace {

const char* kForm =
    "write OP:VARIANT:FRACTION, e.g. rmsnorm_fwd:fused_v2_vec16:0.05 (a 5% slowdown), several separated by commas";

}  // namespace

TestSlowdown parse_test_slowdown(const std::string& text) {
  const auto first = text.find(':');
  const auto last = text.rfind(':');
  if (first == std::string::npos || first == last)
    throw std::invalid_argument(fmt::format("{}='{}' is not OP:VARIANT:FRACTION; {}", kTestSlowdownEnv, text, kForm));
  TestSlowdown s{text.substr(0, first), text.substr(first + 1, last - first - 1), 0};
  const std::string fraction = text.substr(last + 1);
  char* end = nullptr;
  s.fraction = std::strtod(fraction.c_str(), &end);
  if (s.op.empty() || s.variant.empty() || fraction.empty() || end != fraction.c_str() + fraction.size() ||
      !std::isfinite(s.fraction) || s.fraction <= 0 || s.fraction > 1)
    throw std::invalid_argument(fmt::format("{}='{}': the op, the variant and a fraction in (0, 1] are needed; {}",
                                            kTestSlowdownEnv, text, kForm));
  return s;
}

std::vector<TestSlowdown> parse_test_slowdowns(const std::string& text) {
  std::vector<TestSlowdown> out;
  std::size_t from = 0;
  for (;;) {
    const auto comma = text.find(',', from);
    TestSlowdown s = parse_test_slowdown(text.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (find_slowdown(out, s.op, s.variant))
      throw std::invalid_argument(fmt::format("{}='{}' names {}:{} twice; give each variant one fraction",
                                              kTestSlowdownEnv, text, s.op, s.variant));
    out.push_back(std::move(s));
    if (comma == std::string::npos) return out;
    from = comma + 1;
  }
}

std::vector<TestSlowdown> test_slowdowns_from_env() {
  const char* value = std::getenv(kTestSlowdownEnv);
  if (!value || !*value) return {};
  return parse_test_slowdowns(value);
}

std::string test_slowdown_value(const std::vector<TestSlowdown>& slowdowns) {
  std::string value;
  for (const TestSlowdown& s : slowdowns)  // {} is fmt's shortest round-trip form of a double
    value += fmt::format("{}{}:{}:{}", value.empty() ? "" : ",", s.op, s.variant, s.fraction);
  return value;
}

std::vector<std::pair<std::string, std::string>> test_slowdown_settings(const std::vector<TestSlowdown>& slowdowns) {
  if (slowdowns.empty()) return {};
  std::string people;
  for (const TestSlowdown& s : slowdowns)
    people += fmt::format("{}{}:{} +{:.3g}%", people.empty() ? "" : ", ", s.op, s.variant, 100 * s.fraction);
  return {{kTestSlowdownSetting, fmt::format("{} (on purpose, {})", people, kTestSlowdownEnv)},
          {kTestSlowdownValueSetting, test_slowdown_value(slowdowns)}};
}

const TestSlowdown* find_slowdown(const std::vector<TestSlowdown>& slowdowns, const std::string& op,
                                  const std::string& variant) {
  for (const TestSlowdown& s : slowdowns)
    if (s.applies_to(op, variant)) return &s;
  return nullptr;
}

}  // namespace kwb
