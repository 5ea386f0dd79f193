// Values of settings given as text, checked strictly: a whole string, no sign where none is
// allowed, no trailing text, no overflow, so that "-1" for an unsigned seed is refused rather than
// wrapped around. Every front end's text goes through these (the command line's other numbers
// too: cli/flag_values.hpp).
#pragma once

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "harness/plan/setting_error.hpp"

namespace kwb {

// A seed: a whole number from 0 to 2^64-1. Throws SettingError about `setting`.
std::uint64_t parse_seed(Setting setting, std::string_view text);

// A count: a whole number >= 1. Throws SettingError about `setting`.
std::size_t parse_positive_count(Setting setting, std::string_view text);

// The value as the user wrote it, quoted, and shortened when a fuzzer or a paste made it very long.
std::string shown(std::string_view text);

// The whole of `text` as a number (std::from_chars: no leading '+' or space, no trailing text).
template <class T>
bool parse_whole(std::string_view text, T& value) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end && !text.empty();
}

bool all_digits(std::string_view text);

// `values` with later repeats removed, first order kept: a name repeated in a setting counts once
// (a repeated op must not run every case twice).
template <class T>
std::vector<T> without_repeats(const std::vector<T>& values) {
  std::vector<T> out;
  for (const auto& v : values)
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  return out;
}
inline std::vector<std::string> without_repeats(const std::vector<std::string>& values) {
  return without_repeats<std::string>(values);
}

}  // namespace kwb
