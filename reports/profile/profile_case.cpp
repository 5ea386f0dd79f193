// From an identity or a repro line to the one case it names (see profile_case.hpp).
#include "reports/profile/profile_case.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>

#include "harness/plan/planner.hpp"
#include "harness/plan/suggest.hpp"
#include "harness/record/shell_words.hpp"

namespace kwb {
namespace {

constexpr const char* kIdentityForm =
    "op:variant:dtype:shape[:tunables], as a record's nvtx_range or `kwb run --list-cases` prints it "
    "(rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096)";

std::vector<std::string> split(std::string_view text, char by) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t at = text.find(by, start);
    parts.emplace_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

std::vector<std::string> split_list(const std::string& value) {
  std::vector<std::string> out;
  for (std::string& part : split(value, ','))
    if (!part.empty()) out.push_back(std::move(part));
  return out;
}

// kwb run's flags, by long name: where a repro line's value goes (nothing: read and passed over).
enum class FlagUse { list, text, boolean, ignored_value, ignored_boolean, refused };
struct ReproFlag {
  FlagUse use;
  std::vector<std::string> RunSettings::*list = nullptr;
  std::string RunSettings::*text = nullptr;
  bool RunSettings::*boolean = nullptr;
};

const std::map<std::string, ReproFlag>& repro_flags() {
  static const std::map<std::string, ReproFlag> flags = {
      {"op", {FlagUse::list, &RunSettings::ops}},
      {"variant", {FlagUse::list, &RunSettings::variants}},
      {"dtype", {FlagUse::list, &RunSettings::dtypes}},
      {"axis", {FlagUse::list, &RunSettings::axes}},
      {"counters", {FlagUse::list, &RunSettings::counter_sets}},
      {"metrics", {FlagUse::list, &RunSettings::metrics}},
      {"tuning", {FlagUse::list, &RunSettings::tuning}},
      {"shapes", {FlagUse::text, nullptr, &RunSettings::shapes}},
      {"mode", {FlagUse::text, nullptr, &RunSettings::mode}},
      {"flush", {FlagUse::text, nullptr, &RunSettings::flush}},
      {"launch", {FlagUse::text, nullptr, &RunSettings::launch}},
      {"preset", {FlagUse::text, nullptr, &RunSettings::preset}},
      {"seed", {FlagUse::text, nullptr, &RunSettings::seed}},
      {"max-cases", {FlagUse::text, nullptr, &RunSettings::max_cases}},
      {"include-test-variants", {FlagUse::boolean, nullptr, nullptr, &RunSettings::include_test_variants}},
      {"datasheet-ceilings", {FlagUse::boolean, nullptr, nullptr, &RunSettings::datasheet_ceilings}},
      {"out", {FlagUse::ignored_value}},
      {"timer", {FlagUse::ignored_value}},
      {"device", {FlagUse::ignored_value}},
      {"devices", {FlagUse::ignored_value}},
      {"case-timeout", {FlagUse::ignored_value}},
      {"shard", {FlagUse::ignored_value}},
      {"list-cases", {FlagUse::ignored_boolean}},
      {"suite", {FlagUse::refused}},
      {"resume", {FlagUse::refused}},
      {"no-measure", {FlagUse::refused}},
  };
  return flags;
}

std::string long_name(const std::string& flag) {
  static const std::map<std::string, std::string> short_names = {{"-o", "op"}, {"-v", "variant"}, {"-d", "dtype"},
                                                                 {"-a", "axis"}};
  if (const auto s = short_names.find(flag); s != short_names.end()) return s->second;
  return flag.rfind("--", 0) == 0 ? flag.substr(2) : std::string();
}

bool is_kwb_program(const std::string& word) {
  return word == "kwb" || (word.size() > 4 && word.ends_with("/kwb"));
}

}  // namespace

bool is_repro_line(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return false;
  return text.substr(first).starts_with("-") || text.find_first_of(" \t", first) != std::string_view::npos;
}

RunSettings settings_from_repro(const std::vector<std::string>& given) {
  std::vector<std::string> words = given;
  if (!words.empty() && is_kwb_program(words.front())) words.erase(words.begin());
  if (!words.empty() && words.front() == "run") words.erase(words.begin());
  if (words.empty()) throw ProfileCaseError("the repro line names no case: give kwb run's flags (--op, --variant, ...)");
  RunSettings s;
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string word = words[i], value;
    bool has_value = false;
    if (const auto eq = word.find('='); word.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = word.substr(eq + 1);
      word = word.substr(0, eq);
      has_value = true;
    }
    const std::string name = long_name(word);
    const auto flag = repro_flags().find(name);
    if (name.empty() || flag == repro_flags().end())
      throw ProfileCaseError(fmt::format("the repro line's '{}' is not a flag of kwb run that names a case (a repro "
                                         "line is `kwb run --op OP --variant V --dtype D --axis NAME=VALUE ...`, as a "
                                         "record's repro field holds it)",
                                         words[i]));
    const ReproFlag& f = flag->second;
    if (f.use == FlagUse::refused)
      throw ProfileCaseError(fmt::format("the repro line's --{} plans a whole run, not one case; give the case's own "
                                         "repro line (a record's repro field) or its identity",
                                         name));
    if (f.use == FlagUse::boolean || f.use == FlagUse::ignored_boolean) {
      if (has_value) throw ProfileCaseError(fmt::format("the repro line's --{} takes no value", name));
      if (f.boolean) s.*f.boolean = true;
      continue;
    }
    if (!has_value) {
      if (i + 1 >= words.size()) throw ProfileCaseError(fmt::format("the repro line's --{} has no value", name));
      value = words[++i];
    }
    if (f.use == FlagUse::list) {
      auto& list = s.*f.list;
      if (name == "axis" || name == "tuning")
        list.push_back(value);  // one assignment or file per flag ("cols=512,4100" is one axis)
      else
        for (std::string& v : split_list(value)) list.push_back(std::move(v));
    } else if (f.use == FlagUse::text) {
      s.*f.text = value;
    }
    if (name == "axis") s.given.axis = true;
    if (name == "shapes") s.given.shapes = true;
    if (name == "mode") s.given.mode = true;
    if (name == "flush") s.given.flush = true;
    if (name == "preset") s.given.preset = true;
    if (name == "seed") s.given.seed = true;
  }
  return s;
}

RunSettings settings_from_identity(std::string_view identity, const Registry& registry) {
  const std::vector<std::string> parts = split(identity, ':');
  if (parts.size() != 4 && parts.size() != 5)
    throw ProfileCaseError(fmt::format("'{}' is not a case identity: it has {} ':'-separated parts, an identity has 4 "
                                       "or 5: {}",
                                       identity, parts.size(), kIdentityForm));
  for (const std::string& p : parts)
    if (p.empty())
      throw ProfileCaseError(fmt::format("'{}' is not a case identity: a part is empty; {}", identity, kIdentityForm));
  const Op* op = registry.find_op(parts[0]);
  if (!op) throw ProfileCaseError(unknown_name_message("op", parts[0], registry.op_names()));
  const Variant* variant = registry.find_variant(op->name, parts[1]);
  if (!variant) {
    std::vector<std::string> names;
    for (const Variant* v : registry.variants(op->name, true)) names.push_back(v->name);
    throw ProfileCaseError(unknown_name_message("variant of " + op->name, parts[1], names));
  }
  RunSettings s;
  s.ops = {op->name};
  s.variants = {variant->name};
  s.dtypes = {parts[2]};
  s.include_test_variants = op->test_only || variant->test_only;
  // The shape: the integer axes joined by 'x' in the op's order, then ",name=choice" each.
  std::vector<const AxisSpec*> integer_axes;
  for (const AxisSpec& a : op->axes)
    if (!a.is_choice()) integer_axes.push_back(&a);
  std::vector<std::string> pieces = split(parts[3], ',');
  std::vector<std::string> values;
  if (!pieces.front().empty() && pieces.front().find('=') == std::string::npos) {
    values = split(pieces.front(), 'x');
    pieces.erase(pieces.begin());
  }
  if (values.size() != integer_axes.size()) {
    std::string axes;
    for (const AxisSpec* a : integer_axes) {
      if (!axes.empty()) axes += 'x';
      axes += a->name;
    }
    throw ProfileCaseError(fmt::format("the identity's shape '{}' has {} integer value{}; {}'s shape is {} ({})",
                                       parts[3], values.size(), values.size() == 1 ? "" : "s", op->name,
                                       axes.empty() ? "no integer axis" : axes, kIdentityForm));
  }
  for (std::size_t i = 0; i < values.size(); ++i) s.axes.push_back(integer_axes[i]->name + "=" + values[i]);
  for (const std::string& choice : pieces) {
    if (choice.find('=') == std::string::npos)
      throw ProfileCaseError(fmt::format("the identity's shape '{}': '{}' is not name=choice", parts[3], choice));
    s.axes.push_back(choice);
  }
  if (parts.size() == 5)
    for (const std::string& tunable : split(parts[4], ',')) {
      if (tunable.find('=') == std::string::npos)
        throw ProfileCaseError(fmt::format("the identity's tunables '{}': '{}' is not name=value", parts[4], tunable));
      s.axes.push_back(tunable);
    }
  s.given.axis = !s.axes.empty();
  return s;
}

CaseRequest plan_one_case(const RunSettings& settings, const Registry& registry, std::string_view identity) {
  PlannedRun planned;
  try {
    planned = plan_run(settings, registry);
  } catch (const std::invalid_argument& e) {  // SettingError, SuiteError, TuningError
    throw ProfileCaseError(e.what());
  }
  if (planned.cases.empty()) throw ProfileCaseError(no_case_selected().what());
  if (planned.cases.size() > 1)
    throw ProfileCaseError(fmt::format("that plans {} cases ({}, {}{}); kwb profile takes one: name one variant, "
                                       "dtype and value per axis, or give a case identity",
                                       planned.cases.size(), case_identity(planned.cases[0]),
                                       case_identity(planned.cases[1]), planned.cases.size() > 2 ? ", ..." : ""));
  CaseRequest c = planned.cases.front();
  if (!identity.empty() && case_identity(c) != identity)
    throw ProfileCaseError(fmt::format("'{}' is not the identity of the case it plans, '{}' (an identity is written "
                                       "as kwb writes it, with every tunable of the variant: `kwb run --list-cases` "
                                       "prints them)",
                                       identity, case_identity(c)));
  return c;
}

CaseRequest resolve_profile_case(std::string_view text, const Registry& registry) {
  if (!is_repro_line(text)) return plan_one_case(settings_from_identity(text, registry), registry, text);
  std::vector<std::string> words;
  try {
    words = shell_split(text);
  } catch (const ShellWordsError& e) {
    throw ProfileCaseError(std::string("the repro line: ") + e.what());
  }
  return plan_one_case(settings_from_repro(words), registry);
}

const CaseRecord& find_case(const Report& report, const std::string& identity, const std::string& report_path) {
  std::vector<std::string> identities;
  for (const CaseRecord& c : report.cases) {
    if (c.nvtx_range == identity) return c;
    identities.push_back(c.nvtx_range);
  }
  std::string message = fmt::format("{} holds no case '{}' ({} cases)", report_path, identity, report.cases.size());
  if (auto close = closest_match(identity, identities)) message += fmt::format("; did you mean '{}'?", *close);
  throw ProfileCaseError(message + "; `kwb profile` with the report needs a case of it");
}

CaseRequest case_as_recorded(const CaseRecord& record, const CaseRequest& planned, const Registry& registry) {
  if (record.repro.empty()) {
    CaseRequest c = planned;
    if (record.timing) c.mode = record.timing->mode;
    return c;
  }
  std::vector<std::string> words;
  try {
    words = shell_split(record.repro);
  } catch (const ShellWordsError& e) {
    throw ProfileCaseError(fmt::format("the record's repro line '{}': {}", record.repro, e.what()));
  }
  try {
    return plan_one_case(settings_from_repro(words), registry, record.nvtx_range);
  } catch (const ProfileCaseError& e) {
    throw ProfileCaseError(fmt::format("the record's repro line '{}': {}", record.repro, e.what()));
  }
}

int kernels_per_launch(const CaseRecord& record) {
  if (record.counters && !record.counters->kernels.empty()) return static_cast<int>(record.counters->kernels.size());
  if (record.timing && record.timing->kernels_per_sample > 0) return static_cast<int>(record.timing->kernels_per_sample);
  return 0;
}

}  // namespace kwb
