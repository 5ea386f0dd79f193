// Strict whole-string parsing of settings' numbers (see setting_values.hpp).
#include "harness/plan/setting_values.hpp"

#include <fmt/format.h>

namespace kwb {

std::string shown(std::string_view text) {
  return "'" + (text.size() > 60 ? std::string(text.substr(0, 57)) + "..." : std::string(text)) + "'";
}

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::uint64_t parse_seed(Setting setting, std::string_view text) {
  std::uint64_t value = 0;
  if (all_digits(text) && parse_whole(text, value)) return value;
  const char* why = all_digits(text) ? "is larger than 18446744073709551615" : "is not a whole number >= 0";
  throw SettingError(setting, SettingText(setting, fmt::format(": {} {}; give a seed from 0 to 18446744073709551615, "
                                                               "e.g. ", shown(text), why),
                                          setting, " 1"));
}

std::size_t parse_positive_count(Setting setting, std::string_view text) {
  std::size_t value = 0;
  if (!all_digits(text) || !parse_whole(text, value) || value == 0)
    throw SettingError(setting, SettingText(setting, fmt::format(": {} is not a count; give a whole number of 1 or "
                                                                 "more, e.g. ", shown(text)),
                                            setting, " 20000"));
  return value;
}

}  // namespace kwb
