// Strict whole-string parsing: no sign where none is allowed, no trailing text, no overflow.
#include "cli/flag_values.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace kwb::cli {
namespace {

// The value as the user wrote it, shortened when a fuzzer or a paste made it very long.
std::string shown(const std::string& text) {
  return "'" + (text.size() > 60 ? text.substr(0, 57) + "..." : text) + "'";
}

template <class T>
bool parse_whole(const std::string& text, T& value) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end && !text.empty();
}

bool all_digits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

int parse_device_index(const std::string& flag, const std::string& text) {
  int value = 0;
  if (!parse_whole(text, value) || value < 0)
    throw FlagError(fmt::format("{}: {} is not a device index; give a whole number from 0 (the first GPU), "
                                "e.g. {} 0",
                                flag, shown(text), flag));
  return value;
}

DeviceList parse_device_list(const std::string& flag, const std::string& text) {
  if (text == "all") return DeviceList{true, {}};
  DeviceList list;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, end - begin);
    int value = 0;
    if (!parse_whole(item, value) || value < 0)
      throw FlagError(fmt::format("{}: {} in {} is not a device index; give all, or indices from 0 separated by "
                                  "commas, e.g. {} 0,1",
                                  flag, shown(item), shown(text), flag));
    if (std::find(list.indices.begin(), list.indices.end(), value) != list.indices.end())
      throw FlagError(fmt::format("{}: GPU {} is given twice in {}; name each GPU once, e.g. {} 0,1", flag, value,
                                  shown(text), flag));
    list.indices.push_back(value);
    begin = end + 1;
  }
  return list;
}

std::uint64_t parse_seed(const std::string& flag, const std::string& text) {
  std::uint64_t value = 0;
  if (all_digits(text) && parse_whole(text, value)) return value;
  const char* why = all_digits(text) ? "is larger than 18446744073709551615" : "is not a whole number >= 0";
  throw FlagError(fmt::format("{}: {} {}; give a seed from 0 to 18446744073709551615, e.g. {} 1", flag,
                              shown(text), why, flag));
}

double parse_positive_seconds(const std::string& flag, const std::string& text) {
  double value = 0;
  if (!parse_whole(text, value) || !std::isfinite(value) || value <= 0)
    throw FlagError(fmt::format("{}: {} is not a time limit; give seconds above 0 (finite), e.g. {} 120",
                                flag, shown(text), flag));
  return value;
}

std::size_t parse_positive_count(const std::string& flag, const std::string& text) {
  std::size_t value = 0;
  if (!all_digits(text) || !parse_whole(text, value) || value == 0)
    throw FlagError(fmt::format("{}: {} is not a count; give a whole number of 1 or more, e.g. {} 20000",
                                flag, shown(text), flag));
  return value;
}

double parse_threshold(const std::string& flag, const std::string& text) {
  const bool percent = text.ends_with('%');
  double value = 0;
  const bool number = parse_whole(percent ? text.substr(0, text.size() - 1) : text, value) && std::isfinite(value);
  const double fraction = percent ? value / 100 : value;
  if (number && fraction > 0 && fraction < 1) return fraction;
  std::string why = "is not a threshold";
  if (number && !percent && value >= 1) why = fmt::format("would be {:g}%", value * 100);
  throw FlagError(fmt::format("{}: {} {}; give a percentage or a fraction above 0 and below 1, e.g. {} 3% or {} 0.03",
                              flag, shown(text), why, flag, flag));
}

double parse_non_negative_us(const std::string& flag, const std::string& text) {
  double value = 0;
  if (!parse_whole(text, value) || !std::isfinite(value) || value < 0)
    throw FlagError(fmt::format("{}: {} is not a duration; give microseconds, 0 or more (finite), e.g. {} 0.5",
                                flag, shown(text), flag));
  return value;
}

void check_choice(const std::string& flag, const std::string& text, const std::vector<std::string>& choices) {
  if (std::find(choices.begin(), choices.end(), text) != choices.end()) return;
  std::string list;
  for (std::size_t i = 0; i < choices.size(); ++i)
    list += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  throw FlagError(fmt::format("{}: unknown value {}; use {}", flag, shown(text), list));
}

std::vector<std::string> without_repeats(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const auto& v : values)
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  return out;
}

}  // namespace kwb::cli
