// Refusals of a run's settings, in words no front end owns.
//
// A run is asked for with settings (ops, axes, flush, ...: harness/plan/run_request.hpp). A
// refusal names the setting at fault, says what was wrong and how to fix it, and may mention
// other settings on the way ("drop the flush or use mode cold"). Every mention is kept as the
// setting itself, not as one front end's name for it, so that each front end says it its own
// way: the command line as its flag (`--axis rows: ...`), the app with the label of its field
// ("axes rows: ...").
//
// what() is the command line's wording. The command line is the plan's written form (repro
// commands, a journal's plan flags, suite-file messages that quote a planner refusal), so a
// message read without a front end (a log, a suite error, a test) reads as `kwb run` prints it.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kwb {

// Every refusal of a plan request; SettingError when it is about a setting (most are).
struct PlanError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// The settings a run is asked for with.
enum class Setting {
  op, variant, dtype, axis, shapes, mode, flush, preset, seed, max_cases, include_test_variants,
  suite, tuning, datasheet_ceilings, counters, metrics, launch,
};

// The setting's id: the long name of `kwb run`'s flag and the key of a journal's plan flags
// ("max-cases", "include-test-variants").
std::string_view setting_id(Setting setting);

// How the command line writes a setting: `--` and its id.
std::string command_line_name(Setting setting);

// A front end's name for each setting.
using SettingNames = std::function<std::string(Setting)>;

// Text that mentions settings: plain pieces and settings, in order, joined when worded.
//   SettingText(Setting::flush, " clean: hot mode flushes nothing; drop ", Setting::flush)
class SettingText {
 public:
  template <class... Pieces>
  explicit SettingText(Pieces&&... pieces) {
    (add(std::forward<Pieces>(pieces)), ...);
  }

  // The text with each setting named as `names` says.
  std::string worded(const SettingNames& names) const;

 private:
  void add(Setting setting) { pieces_.emplace_back(setting); }
  void add(std::string text) { pieces_.emplace_back(std::move(text)); }

  std::vector<std::variant<std::string, Setting>> pieces_;
};

struct SettingError : PlanError {
  SettingError(Setting setting, SettingText message)
      : PlanError(message.worded(command_line_name)), setting(setting), message(std::move(message)) {}

  // The message as a front end that names the settings its own way says it.
  std::string worded(const SettingNames& names) const { return message.worded(names); }

  Setting setting;      // the setting at fault
  SettingText message;  // what was wrong and how to fix it
};

}  // namespace kwb
