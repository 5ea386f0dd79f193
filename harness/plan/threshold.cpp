// Thresholds: a percentage or a fraction, strictly parsed (no trailing text, no hex, no inf).
#include "harness/plan/threshold.hpp"

#include <charconv>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "harness/catalogue/excerpt.hpp"

namespace kwb {
namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A plain decimal number ("2", "2.5", "0.025", "1e-2"), nothing else.
bool parse_decimal(std::string_view s, double& out) {
  if (s.empty() || s.front() == '+' || s.front() == '-') return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, std::chars_format::general);
  return ec == std::errc() && end == s.data() + s.size() && std::isfinite(out);
}

}  // namespace

double parse_threshold(std::string_view text) {
  const std::string_view t = trimmed(text);
  const bool percent = !t.empty() && t.back() == '%';
  const std::string_view number = percent ? trimmed(t.substr(0, t.size() - 1)) : t;
  double value = 0;
  if (!parse_decimal(number, value))
    throw ThresholdError(fmt::format("'{}' is not a threshold; write a percentage such as 3% or a fraction "
                                     "such as 0.03", excerpt(text)));
  const double fraction = percent ? value / 100.0 : value;
  if (!percent && value >= 1)
    throw ThresholdError(fmt::format("'{}' is ambiguous as a threshold (a fraction of 1 or more); write {}% for "
                                     "{} percent, or a fraction below 1 such as 0.03", excerpt(text), excerpt(number), excerpt(number)));
  if (fraction <= 0 || fraction > 1)
    throw ThresholdError(fmt::format("threshold '{}' is out of range; it must be above 0% and at most 100% "
                                     "(the smallest slowdown that counts as a regression), e.g. 3%", excerpt(text)));
  return fraction;
}

}  // namespace kwb
