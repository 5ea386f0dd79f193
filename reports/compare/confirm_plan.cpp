// The suspects and their requests (see confirm_plan.hpp).
#include "reports/compare/confirm_plan.hpp"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "harness/worker/test_slowdown.hpp"
#include "reports/compare/match.hpp"

namespace kwb {
namespace {

constexpr const char* kNotRecorded = "(not recorded)";

const TimingResult* first_timing(const Report& r) {
  for (const CaseRecord& c : r.cases)
    if (c.timing) return &*c.timing;
  return nullptr;
}

// The settings a case's measurement depends on, as the report records them (its run settings,
// else its first timed case's).
struct MeasureSettings {
  std::string mode, flush, launch, preset, seed;
};

MeasureSettings measure_settings(const Report& r) {
  const TimingResult* t = first_timing(r);
  auto get = [&](const char* key, std::string from_case) {
    if (auto it = r.run.settings.find(key); it != r.run.settings.end()) return it->second;
    return t ? from_case : std::string(kNotRecorded);
  };
  MeasureSettings s;
  s.mode = get("mode", t ? std::string(to_string(t->mode)) : "");
  s.flush = s.mode == "hot" ? "none" : get("flush", t ? t->flush : "");
  s.launch = launch_of(r);
  s.preset = get("preset", t ? t->preset : "");
  s.seed = r.run.settings.count("seed") ? r.run.settings.at("seed") : kNotRecorded;
  return s;
}

}  // namespace

bool is_suspect(const ComparedCase& c) {
  return c.outcome == CaseOutcome::slower || c.outcome == CaseOutcome::faster || c.outcome == CaseOutcome::ambiguous;
}

std::vector<std::string> suspect_keys(const CompareReport& report) {
  std::vector<std::string> keys;
  for (const ComparedCase& c : report.cases)
    if (is_suspect(c)) keys.push_back(c.key);
  return keys;
}

std::optional<std::string> confirm_settings_problem(const Report& base, const Report& next,
                                                    const std::string& base_name, const std::string& new_name) {
  const MeasureSettings b = measure_settings(base), n = measure_settings(next);
  std::string differ;
  auto check = [&](const char* what, const std::string& x, const std::string& y) {
    if (x != y) differ += fmt::format("{}{}: BASE {}, NEW {}", differ.empty() ? "" : "; ", what, x, y);
  };
  check("mode", b.mode, n.mode);
  check("flush", b.flush, n.flush);
  check("launch", b.launch, n.launch);
  check("preset", b.preset, n.preset);
  check("seed", b.seed, n.seed);
  if (differ.empty()) return std::nullopt;
  return fmt::format("--confirm: {} and {} were measured under different settings ({}); the interleaved rounds "
                     "measure both builds under one set, so they would not re-measure what was compared. Compare "
                     "reports measured alike (run NEW again with BASE's settings), or drop --confirm",
                     base_name, new_name, differ);
}

CaseRequest confirm_request(const CaseRecord& record, const Report& base, const std::string& base_name, int index) {
  const MeasureSettings s = measure_settings(base);
  auto missing = [&](const char* what) {
    return ReportError(fmt::format("{}: --confirm: the report does not record its {} (run.settings.{}), which "
                                   "re-measuring case {} needs; compare reports that `kwb run` wrote",
                                   base_name, what, what, case_key(record)));
  };
  CaseRequest r;
  r.index = index;
  r.op = record.op;
  r.variant = record.variant;
  r.dtype = record.dtype;
  r.shape = record.shape;
  r.tunables = record.tunables;
  const auto mode = parse_mode(s.mode);
  if (!mode) throw missing("mode");
  r.mode = *mode;
  if (r.mode == Mode::cold) {
    const auto flush = parse_flush_kind(s.flush);
    if (!flush) throw missing("flush");
    r.flush = *flush;
  }
  const auto launch = parse_launch_kind(s.launch);
  if (!launch)
    throw ReportError(fmt::format("{}: run.settings.launch: unknown launch \"{}\" (expected stream or graph)",
                                  base_name, s.launch));
  r.launch = *launch;
  if (s.preset == kNotRecorded) throw missing("preset");
  r.preset = s.preset;
  char* end = nullptr;
  const unsigned long long seed = std::strtoull(s.seed.c_str(), &end, 10);
  if (s.seed.empty() || s.seed == kNotRecorded || *end != '\0') throw missing("seed");
  r.seed = seed;
  // The case was in the report, so it was run: a test-only variant was asked for by name there.
  r.include_test_variants = true;
  return r;
}

std::optional<std::string> test_slowdown_of(const Report& report, const std::string& name) {
  // The exact value, as the workers that measured the report parsed it.
  if (const auto exact = report.run.settings.find(kTestSlowdownValueSetting); exact != report.run.settings.end()) {
    try {
      parse_test_slowdowns(exact->second);
    } catch (const std::invalid_argument& e) {
      throw ReportError(fmt::format("{}: run.settings.{}: {}; --confirm cannot give that side's worker the same "
                                    "switch; compare reports that kwb run wrote",
                                    name, kTestSlowdownValueSetting, e.what()));
    }
    return exact->second;
  }
  // A report written before the exact value was recorded: its text for people, whose percentages
  // hold 3 significant digits ("OP:VARIANT +5%[, OP:VARIANT +2%...] (on purpose, KWB_TEST_SLOWDOWN)").
  const auto it = report.run.settings.find(kTestSlowdownSetting);
  if (it == report.run.settings.end()) return std::nullopt;
  const std::string& text = it->second;
  const auto refused = [&] {
    return ReportError(fmt::format("{}: run.settings.test_slowdown '{}' is not 'OP:VARIANT +PCT%[, ...] (on purpose, "
                                   "...)' as kwb run writes it; --confirm cannot give that side's worker the same "
                                   "switch; compare reports that kwb run wrote",
                                   name, text));
  };
  const std::string list = text.substr(0, text.find(" ("));
  std::string value;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = list.find(", ", start);
    const std::string entry = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto space = entry.find(" +");
    if (space == std::string::npos || entry.back() != '%' || entry.find(':') > space) throw refused();
    const std::string number = entry.substr(space + 2, entry.size() - space - 3);
    char* end = nullptr;
    const double pct = std::strtod(number.c_str(), &end);
    if (number.empty() || *end != '\0' || !(pct > 0 && pct <= 100)) throw refused();
    value += fmt::format("{}{}:{}", value.empty() ? "" : ",", entry.substr(0, space), pct / 100);
    if (comma == std::string::npos) return value;
    start = comma + 2;
  }
}

}  // namespace kwb
