// Suite -> planner requests -> the union of their plans, with every name checked where it stands.
#include "harness/plan/suite_plan.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/plan/suggest.hpp"

namespace kwb {
namespace {

[[noreturn]] void fail(const SuiteFile& s, const SuiteLocation& at, const std::string& message) {
  throw SuiteError(s.path, at, message);
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::vector<const Op*> entry_ops(const SuiteFile& s, const SuiteEntry& e, const Registry& registry,
                                 bool include_test_variants) {
  std::vector<const Op*> ops;
  for (const auto& name : e.ops) {
    const Op* op = registry.find_op(name.value);
    if (!op) fail(s, name.at, unknown_name_message("op", name.value, registry.op_names()) + "; `kwb list` shows every op");
    if (op->test_only && !include_test_variants)
      fail(s, name.at, "op '" + name.value + "' is a test-only op (it proves a harness contract); run the suite "
                       "with --include-test-variants or leave it out");
    ops.push_back(op);
  }
  return ops;
}

void check_variants(const SuiteFile& s, const SuiteEntry& e, const std::vector<const Op*>& ops,
                    const Registry& registry, bool include_test_variants) {
  std::vector<std::string> op_names;
  for (const Op* op : ops) op_names.push_back(op->name);
  for (const auto& name : e.variants) {
    const Variant* found = nullptr;
    std::vector<std::string> known;
    for (const Op* op : ops)
      for (const Variant* v : registry.variants(op->name, true)) {
        if (v->name == name.value) found = v;
        if (!v->test_only && std::find(known.begin(), known.end(), v->name) == known.end()) known.push_back(v->name);
      }
    if (!found)
      fail(s, name.at, unknown_name_message("variant", name.value, known) + " (the variants of " + joined(op_names) + ")");
    if (found->test_only && !include_test_variants)
      fail(s, name.at, "variant '" + name.value + "' is a test-only variant (it faults or hangs on purpose); run the "
                       "suite with --include-test-variants or leave it out");
  }
}

// The axis must be an axis of one of the entry's ops or a tunable of one of their variants; its
// values go through the --axis grammar.
AxisAssignment entry_axis(const SuiteFile& s, const SuiteAxis& axis, const std::vector<const Op*>& ops,
                          const Registry& registry) {
  std::vector<std::string> known;
  const auto add = [&](const std::string& n) {
    if (std::find(known.begin(), known.end(), n) == known.end()) known.push_back(n);
  };
  for (const Op* op : ops) {
    for (const auto& a : op->axes) add(a.name);
    for (const Variant* v : registry.variants(op->name, true))
      for (const Tunable& t : v->tunables) add(t.name);
  }
  if (std::find(known.begin(), known.end(), axis.name.value) == known.end())
    fail(s, axis.name.at, unknown_name_message("axis", axis.name.value, known) +
                              " (the axes and tunables of this entry's ops)");
  try {
    return parse_axis_for(axis.assignment(), registry);
  } catch (const AxisParseError& e) {
    fail(s, axis.values.at, e.what());
  }
}

}  // namespace

std::vector<SuiteRequest> suite_requests(const SuiteFile& suite, const Registry& registry, const SuiteRunFlags& flags) {
  const Mode mode = flags.mode.value_or(suite.mode);
  // A hot sample is not flushed: the suite's flush only matters in cold mode, a flag's is checked.
  FlushKind flush = mode == Mode::hot ? FlushKind::dirty : suite.flush;
  if (flags.flush) {
    check_flush_for_mode(*flags.flush, mode);
    flush = *flags.flush;
  }
  std::vector<SuiteRequest> out;
  for (const SuiteEntry& e : suite.entries) {
    const auto ops = entry_ops(suite, e, registry, flags.include_test_variants);
    check_variants(suite, e, ops, registry, flags.include_test_variants);
    PlanRequest base;
    for (const auto& op : e.ops) base.ops.push_back(op.value);
    for (const auto& v : e.variants) base.variants.push_back(v.value);
    base.dtypes = e.dtypes;
    base.shape_set = e.shape_set;
    base.mode = mode;
    base.flush = flush;
    base.launch = flags.launch.value_or(suite.launch);
    base.preset = flags.preset.value_or(suite.preset);
    base.seed = flags.seed.value_or(suite.seed);
    base.include_test_variants = flags.include_test_variants;
    base.max_cases = flags.max_cases;
    if (e.grids.empty()) out.push_back({base, &e, e.shapes_at});
    for (std::size_t g = 0; g < e.grids.size(); ++g) {
      SuiteRequest r{base, &e, e.grids.size() == 1 ? e.shapes_at : e.grids[g].front().name.at};
      if (e.grids.size() > 1) r.at.key = fmt::format("{}[{}]", e.shapes_at.key, g);
      for (const SuiteAxis& axis : e.grids[g]) r.request.axes.push_back(entry_axis(suite, axis, ops, registry));
      out.push_back(std::move(r));
    }
  }
  return out;
}

namespace {

// Everything a PlanRequest asks for, as text: equal keys plan equal cases.
std::string request_key(const PlanRequest& r) {
  std::string key = fmt::format("{}|{}|", fmt::join(r.ops, ","), fmt::join(r.variants, ","));
  for (DType d : r.dtypes) key += std::string(to_string(d)) + ",";
  for (const AxisAssignment& a : r.axes)
    key += fmt::format("|{}={};{}", a.name, fmt::join(a.values, ","), fmt::join(a.choices, ","));
  return key + fmt::format("|{}|{}|{}|{}|{}|{}|{}|{}", static_cast<int>(r.shape_set), to_string(r.mode),
                           to_string(r.flush), to_string(r.launch), r.preset, r.seed, r.include_test_variants,
                           r.max_cases);
}

}  // namespace

std::vector<CaseRequest> plan_suite(const SuiteFile& suite, const Registry& registry, const SuiteRunFlags& flags) {
  // 1. The flags' filters name things that exist (they narrow; they cannot add).
  for (const auto& op : flags.ops)
    if (!registry.find_op(op))
      throw SettingError(Setting::op,
                         SettingText(Setting::op, ": " + unknown_name_message("op", op, registry.op_names())));
  const auto variant_names = registry.variant_names(true);
  for (const auto& v : flags.variants)
    if (std::find(variant_names.begin(), variant_names.end(), v) == variant_names.end())
      throw SettingError(Setting::variant,
                         SettingText(Setting::variant,
                                     ": " + unknown_name_message("variant", v, registry.variant_names(false))));
  // 2. Every entry through the planner; a case two entries both plan runs once. An entry that asks
  // for exactly what an earlier one asked (an alias, a copy) is not planned again: a suite of
  // 10^5 copies costs what one does, and the case limit bounds it.
  std::vector<CaseRequest> cases;
  std::set<std::string> seen, requested;
  for (const SuiteRequest& r : suite_requests(suite, registry, flags)) {
    if (!requested.insert(request_key(r.request)).second) continue;
    std::vector<CaseRequest> planned;
    try {
      planned = plan_cases(r.request, registry);
    } catch (const PlanError& e) {
      fail(suite, r.at, e.what());
    }
    if (planned.empty())
      fail(suite, r.entry->at, "the entry selects no case (none of its ops has the dtypes it names); check it "
                               "against `kwb list`");
    for (auto& c : planned)
      if (seen.insert(case_identity(c)).second) cases.push_back(std::move(c));
    if (cases.size() > flags.max_cases)
      throw SettingError(Setting::max_cases,
                         SettingText(fmt::format("suite '{}' plans more than {} cases (the limit) by {}; narrow its "
                                                 "entries or raise the limit with ",
                                                 suite.name, flags.max_cases, r.at.key),
                                     Setting::max_cases, " N"));
  }
  // 3. Narrowed by the flags, renumbered.
  const std::size_t planned = cases.size();
  const auto keep = [&](const CaseRequest& c) {
    const auto named = [](const auto& list, const auto& x) {
      return list.empty() || std::find(list.begin(), list.end(), x) != list.end();
    };
    return named(flags.ops, c.op) && named(flags.variants, c.variant) && named(flags.dtypes, c.dtype);
  };
  cases.erase(std::remove_if(cases.begin(), cases.end(), [&](const CaseRequest& c) { return !keep(c); }), cases.end());
  if (cases.empty())
    throw SettingError(Setting::op, SettingText(Setting::op, ", ", Setting::variant, " and ", Setting::dtype,
                                                fmt::format(" leave none of the {} cases of suite '{}' ({}); they "
                                                            "narrow a suite, they cannot add to it",
                                                            planned, suite.name, suite.path)));
  for (std::size_t i = 0; i < cases.size(); ++i) cases[i].index = static_cast<int>(i);
  return cases;
}

SuiteInfo suite_info(const SuiteFile& suite, const Registry& registry) {
  SuiteInfo info;
  info.name = suite.name;
  info.path = suite.path;
  info.default_threshold = suite.default_threshold;
  for (const auto& [op, fraction] : suite.op_thresholds) {
    if (!registry.find_op(op.value))
      fail(suite, op.at, unknown_name_message("op", op.value, registry.op_names()) +
                             "; thresholds are keyed by op name (or default)");
    info.op_thresholds[op.value] = fraction;
  }
  info.compare_fail_on = suite.compare_fail_on;
  return info;
}

}  // namespace kwb
