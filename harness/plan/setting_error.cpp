// Setting ids and the wording of a SettingText (see setting_error.hpp).
#include "harness/plan/setting_error.hpp"

namespace kwb {

std::string_view setting_id(Setting setting) {
  switch (setting) {
    case Setting::op: return "op";
    case Setting::variant: return "variant";
    case Setting::dtype: return "dtype";
    case Setting::axis: return "axis";
    case Setting::shapes: return "shapes";
    case Setting::mode: return "mode";
    case Setting::flush: return "flush";
    case Setting::preset: return "preset";
    case Setting::seed: return "seed";
    case Setting::max_cases: return "max-cases";
    case Setting::include_test_variants: return "include-test-variants";
    case Setting::suite: return "suite";
    case Setting::tuning: return "tuning";
    case Setting::datasheet_ceilings: return "datasheet-ceilings";
    case Setting::counters: return "counters";
    case Setting::metrics: return "metrics";
    case Setting::launch: return "launch";
  }
  return "?";
}

std::string command_line_name(Setting setting) { return "--" + std::string(setting_id(setting)); }

std::string SettingText::worded(const SettingNames& names) const {
  std::string out;
  for (const auto& piece : pieces_) {
    if (const auto* text = std::get_if<std::string>(&piece)) out += *text;
    else out += names(std::get<Setting>(piece));
  }
  return out;
}

}  // namespace kwb
