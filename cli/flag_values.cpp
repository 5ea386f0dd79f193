// Strict whole-string parsing: no sign where none is allowed, no trailing text, no overflow.
#include "cli/flag_values.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace kwb::cli {
namespace {

// A check of the request layer's, worded for `flag`: the checks used here mention only the
// setting they check, so every mention is the flag (--top is counted as --max-cases is).
template <class Check>
auto worded_for(const std::string& flag, Check check) {
  try {
    return check();
  } catch (const SettingError& e) {
    throw FlagError(e.worded([&](Setting) { return flag; }));
  }
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
  return worded_for(flag, [&] { return kwb::parse_seed(Setting::seed, text); });
}

double parse_positive_seconds(const std::string& flag, const std::string& text) {
  double value = 0;
  if (!parse_whole(text, value) || !std::isfinite(value) || value <= 0)
    throw FlagError(fmt::format("{}: {} is not a time limit; give seconds above 0 (finite), e.g. {} 120",
                                flag, shown(text), flag));
  return value;
}

std::size_t parse_positive_count(const std::string& flag, const std::string& text) {
  return worded_for(flag, [&] { return kwb::parse_positive_count(Setting::max_cases, text); });
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

}  // namespace kwb::cli
