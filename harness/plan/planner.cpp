// Filters -> cases, the memory check and the repro command line.
#include "harness/plan/planner.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <limits>

#include "harness/catalogue/case_identity.hpp"
#include "harness/plan/counter_sets.hpp"
#include "harness/plan/setting_values.hpp"
#include "harness/plan/suggest.hpp"

namespace kwb {
namespace {

template <class T>
bool contains(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

const AxisAssignment* given_for(const std::vector<AxisAssignment>& axes, std::string_view name) {
  auto it = std::find_if(axes.begin(), axes.end(), [&](const auto& x) { return x.name == name; });
  return it != axes.end() ? &*it : nullptr;
}

// The values an assignment gives a choice axis. An assignment read without the registry (the
// integer grammar) may still name numeric choices: causal=1 reads as the integer 1, choice "1".
std::vector<AxisValue> choice_values(const Op& op, const AxisSpec& spec, const AxisAssignment& given) {
  std::vector<AxisValue> out;
  std::vector<std::string> names = given.choices;
  if (!given.is_choice())
    for (auto v : given.values) names.push_back(std::to_string(v));
  for (const auto& name : names) {
    if (std::find(spec.choices.begin(), spec.choices.end(), name) == spec.choices.end())
      throw SettingError(Setting::axis,
                         SettingText(Setting::axis, " " + given.name + ": " +
                                                        unknown_name_message("choice", name, spec.choices) +
                                                        " (axis '" + spec.name + "' of op '" + op.name +
                                                        "' takes one of its names)"));
    out.emplace_back(name);
  }
  return out;
}

std::vector<Shape> shapes_for(const Op& op, const std::vector<AxisAssignment>& axes, ShapeSet set) {
  bool names_an_axis = false;
  for (const auto& a : op.axes) names_an_axis = names_an_axis || given_for(axes, a.name);
  if (!names_an_axis) return named_shape_set(op, set);
  std::vector<std::pair<std::string, std::vector<AxisValue>>> grid;
  for (const auto& a : op.axes) {
    const AxisAssignment* given = given_for(axes, a.name);
    if (!given) {
      grid.push_back({a.name, {a.default_axis_value()}});
    } else if (a.is_choice()) {
      grid.push_back({a.name, choice_values(op, a, *given)});
    } else if (given->is_choice()) {
      throw SettingError(Setting::axis, SettingText(Setting::axis, " " + given->name + ": axis '" + a.name +
                                                                       "' of op '" + op.name +
                                                                       "' takes positive integers, not names, e.g. " +
                                                                       a.name + "=" + std::to_string(a.default_value)));
    } else {
      grid.push_back({a.name, given->axis_values()});
    }
  }
  return expand_sweep(grid);
}

// Every combination of the variant's tunable values: the defaults at this shape (default_value)
// unless the sweep names a tunable, then the named values the variant declares (in the order
// written).
std::vector<TunableValues> tunable_points(const Variant& v, const std::vector<AxisAssignment>& axes,
                                          const Shape& shape, DType dtype) {
  std::vector<TunableValues> points{{}};
  for (const Tunable& t : v.tunables) {
    std::vector<std::int64_t> values;
    if (const AxisAssignment* given = given_for(axes, t.name)) {
      for (auto value : given->values)
        if (std::count(t.values.begin(), t.values.end(), value)) values.push_back(value);
    } else if (!t.values.empty()) {
      values.push_back(default_value(t, shape, dtype));
    }
    std::vector<TunableValues> next;
    for (const auto& p : points)
      for (auto value : values) {
        next.push_back(p);
        next.back().push_back({t.name, value});
      }
    points = std::move(next);
  }
  return points;
}

// How many points tunable_points gives, without evaluating any default (no shape needed).
std::size_t tunable_point_count(const Variant& v, const std::vector<AxisAssignment>& axes) {
  std::size_t points = 1;
  for (const Tunable& t : v.tunables) {
    std::size_t n = t.values.empty() ? 0 : 1;
    if (const AxisAssignment* given = given_for(axes, t.name)) {
      n = 0;
      for (auto value : given->values) n += std::count(t.values.begin(), t.values.end(), value) > 0;
    }
    points *= n;
  }
  return points;
}

std::string joined(const std::vector<std::int64_t>& values) {
  std::string out;
  for (auto v : values) {
    if (!out.empty()) out += ',';
    out += std::to_string(v);
  }
  return out;
}

// Elements of a tensor, exact while below 2^64 and never wrapped around.
long double element_count(const TensorSpec& t) {
  long double n = 1;
  for (auto d : t.dims) n *= static_cast<long double>(d);
  return n;
}

// How many shapes shapes_for() would give, without building them.
long double shape_count(const Op& op, const std::vector<AxisAssignment>& axes, ShapeSet set) {
  bool names_an_axis = false;
  for (const auto& a : op.axes) names_an_axis = names_an_axis || given_for(axes, a.name);
  if (!names_an_axis) return static_cast<long double>(named_shape_set(op, set).size());
  long double n = 1;
  for (const auto& a : op.axes)
    if (const AxisAssignment* given = given_for(axes, a.name))
      n *= static_cast<long double>(given->is_choice() ? given->choices.size() : given->values.size());
  return n;
}

// "rows=1:4096:+1" style summary of the product for one op: "4096 rows x 4096 cols x 3 dtypes x 4 variants".
std::string product_text(const Op& op, const std::vector<AxisAssignment>& axes, ShapeSet set,
                         std::size_t dtypes, std::size_t variants) {
  std::string text;
  for (const auto& a : op.axes)
    if (const AxisAssignment* given = given_for(axes, a.name))
      text += fmt::format("{} {} x ", given->is_choice() ? given->choices.size() : given->values.size(), a.name);
  if (axes.empty())
    text += fmt::format("{} {} shapes x ", named_shape_set(op, set).size(), set == ShapeSet::edge ? "edge" : "default");
  return text + fmt::format("{} dtype(s) x {} variant(s)", dtypes, variants);
}

void check_tensor_sizes(const Op& op, DType dtype, const Shape& shape) {
  constexpr long double kMaxBytes = static_cast<long double>(std::numeric_limits<std::int64_t>::max());
  for (const auto& t : op.tensors(shape, dtype)) {
    const long double bytes = element_count(t) * static_cast<long double>(t.element_bytes(dtype));
    if (bytes > kMaxBytes)
      throw SettingError(Setting::axis,
                         SettingText(fmt::format("tensor '{}' of {} at {} would need {:.3g} bytes, more than 64-bit "
                                                 "sizes can count (and far more than any GPU holds); use smaller ",
                                                 t.name, op.name, shape.to_assignments(), bytes),
                                     Setting::axis, " values"));
  }
}

}  // namespace

// The shapes an op runs when the sweep names none of its axes: its default or edge set; an op
// without one runs every axis at its default (at most 256 for the edge set).
std::vector<Shape> named_shape_set(const Op& op, ShapeSet set) {
  const auto& listed = set == ShapeSet::edge ? op.edge_shapes : op.default_shapes;
  if (!listed.empty()) return listed;
  Shape s;
  for (const auto& a : op.axes) {
    AxisValue v = a.default_axis_value();
    if (set == ShapeSet::edge && !a.is_choice()) v = AxisValue(std::min<std::int64_t>(a.default_value, 256));
    s.axes.push_back({a.name, v});
  }
  return {s};
}


AxisAssignment parse_axis_for(std::string_view text, const Registry& registry) {
  // Union of each choice axis's names over the ops (problems() keeps one name one kind).
  auto choices = std::make_shared<std::map<std::string, std::vector<std::string>, std::less<>>>();
  for (const Op& op : registry.ops())
    for (const AxisSpec& a : op.axes)
      for (const auto& c : a.choices) {
        auto& names = (*choices)[a.name];
        if (std::find(names.begin(), names.end(), c) == names.end()) names.push_back(c);
      }
  const auto choices_of = [choices](std::string_view axis) -> const std::vector<std::string>* {
    auto it = choices->find(axis);
    return it != choices->end() ? &it->second : nullptr;
  };
  const auto defaults_of = [&registry](std::string_view axis) {
    std::vector<std::int64_t> defaults;
    for (const Op& op : registry.ops())
      for (const AxisSpec& a : op.axes)
        if (a.name == axis && !a.is_choice()) defaults.push_back(a.default_value);
    return defaults;
  };
  return parse_axis_assignment(text, choices_of, defaults_of);
}

namespace {

// What a request selects: the ops, and per op the variants it runs (the baseline first).
struct Selection {
  std::vector<const Op*> ops;
  std::vector<std::vector<const Variant*>> variants;  // variants[i]: those of ops[i]
};

// Phase 1: repeated names count once; an axis named twice is refused.
PlanRequest normalized(const PlanRequest& request) {
  PlanRequest req = request;
  req.ops = without_repeats(req.ops);
  req.variants = without_repeats(req.variants);
  req.dtypes = without_repeats(req.dtypes);
  for (std::size_t i = 0; i < req.axes.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (req.axes[i].name == req.axes[j].name) {
        const std::string& name = req.axes[i].name;
        throw SettingError(Setting::axis,
                           SettingText(Setting::axis, fmt::format(": axis '{}' is given twice; give all its values in "
                                                                  "one ", name),
                                       Setting::axis, ", e.g. ", Setting::axis,
                                       fmt::format(" {}=512,4096 or a range {}=512:4096:x2", name, name)));
      }
  return req;
}

// Phase 2: the ops. Test-only ops join the default sweep only with include-test-variants.
std::vector<const Op*> selected_ops(const PlanRequest& req, const Registry& registry) {
  std::vector<const Op*> ops;
  if (req.ops.empty()) {
    for (const auto& op : registry.ops())
      if (!op.test_only || req.include_test_variants) ops.push_back(&op);
    return ops;
  }
  for (const auto& name : req.ops) {
    const Op* op = registry.find_op(name);
    if (!op)
      throw SettingError(Setting::op, SettingText(unknown_name_message("op", name, registry.op_names()) +
                                                  "; `kwb list` shows every op"));
    if (op->test_only && !req.include_test_variants)
      throw SettingError(Setting::op, SettingText("op '" + name + "' is a test-only op (it proves a harness "
                                                  "contract); add ",
                                                  Setting::include_test_variants, " to run it"));
    ops.push_back(op);
  }
  return ops;
}

// Phase 3: every variant named exists in a selected op; the variants each op runs.
std::vector<std::vector<const Variant*>> chosen_variants(const PlanRequest& req, const std::vector<const Op*>& ops,
                                                         const Registry& registry) {
  for (const auto& name : req.variants) {
    const Variant* found = nullptr;
    std::vector<std::string> known;
    for (const Op* op : ops) {
      for (const Variant* v : registry.variants(op->name, true)) {
        if (v->name == name) found = v;
        if (!v->test_only) known.push_back(v->name);
      }
    }
    if (!found) throw SettingError(Setting::variant, SettingText(unknown_name_message("variant", name, known)));
    if (found->test_only && !req.include_test_variants)
      throw SettingError(Setting::variant, SettingText("variant '" + name + "' is a test-only variant (it faults or "
                                                       "hangs on purpose); add ",
                                                       Setting::include_test_variants, " to run it"));
  }
  std::vector<std::vector<const Variant*>> chosen(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    auto variants = registry.variants(ops[i]->name, req.include_test_variants);
    std::stable_partition(variants.begin(), variants.end(),
                          [](const Variant* v) { return v->role == Role::baseline; });
    for (const Variant* v : variants)
      if (req.variants.empty() ? true : contains(req.variants, v->name)) chosen[i].push_back(v);
  }
  return chosen;
}

// Phase 4a: an axis named belongs to a selected op or is a tunable of a selected variant (which
// takes integers).
void check_axis_name(const AxisAssignment& a, const Selection& s) {
  std::vector<std::string> known;
  bool ok = false;
  for (std::size_t i = 0; i < s.ops.size(); ++i) {
    for (const auto& spec : s.ops[i]->axes) {
      known.push_back(spec.name);
      ok = ok || spec.name == a.name;
    }
    for (const Variant* v : s.variants[i])
      for (const Tunable& t : v->tunables) {
        if (!contains(known, t.name)) known.push_back(t.name);
        if (t.name != a.name) continue;
        ok = true;
        if (a.is_choice())
          throw SettingError(Setting::axis, SettingText(Setting::axis, " " + a.name + ": tunable '" + t.name +
                                                                           "' of variant '" + v->name +
                                                                           "' takes integers: " + joined(t.values)));
      }
  }
  if (!ok) throw SettingError(Setting::axis, SettingText(unknown_name_message("axis", a.name, known)));
}

// Phase 4b: every value a tunable is given is declared by one of the selected variants.
void check_tunable_values(const AxisAssignment& a, const Selection& s) {
  for (auto value : a.values) {
    bool declared = false, is_tunable = false;
    std::vector<std::int64_t> offered;
    for (std::size_t i = 0; i < s.ops.size(); ++i) {
      for (const auto& spec : s.ops[i]->axes) declared = declared || spec.name == a.name;
      for (const Variant* v : s.variants[i])
        for (const Tunable& t : v->tunables)
          if (t.name == a.name) {
            is_tunable = true;
            declared = declared || contains(t.values, value);
            for (auto x : t.values)
              if (!contains(offered, x)) offered.push_back(x);
          }
    }
    if (is_tunable && !declared)
      throw SettingError(Setting::axis, SettingText(Setting::axis, " " + a.name + "=" + std::to_string(value) +
                                                                       ": no selected variant declares that value of "
                                                                       "tunable '" + a.name + "'; declared values: " +
                                                                       joined(offered)));
  }
}

// Phase 5: count before building: two ranges of 4096 values would be 16M shapes per variant.
void check_case_count(const PlanRequest& req, const Selection& s) {
  long double total = 0;
  std::string biggest;
  long double biggest_count = -1;
  for (std::size_t i = 0; i < s.ops.size(); ++i) {
    std::size_t dtypes = 0;
    for (DType dtype : s.ops[i]->dtypes) dtypes += req.dtypes.empty() || contains(req.dtypes, dtype);
    long double points = 0;  // variants x their tunable points
    for (const Variant* v : s.variants[i]) points += static_cast<long double>(tunable_point_count(*v, req.axes));
    const long double n = shape_count(*s.ops[i], req.axes, req.shape_set) * static_cast<long double>(dtypes) * points;
    total += n;
    if (n > biggest_count) {
      biggest_count = n;
      biggest = s.ops[i]->name + ": " + product_text(*s.ops[i], req.axes, req.shape_set, dtypes, s.variants[i].size());
    }
  }
  if (total > static_cast<long double>(req.max_cases))
    throw SettingError(Setting::max_cases,
                       SettingText(fmt::format("the plan has {:.0f} cases ({}), more than the limit of {}; narrow the ",
                                               total, biggest, req.max_cases),
                                   Setting::axis, " ranges or filter with ", Setting::op, ", ", Setting::variant,
                                   " and ", Setting::dtype, ", or raise the limit with ", Setting::max_cases, " N"));
}

// Phase 6: the cases, op by op, dtype, shape, then the variants and their tunable points.
std::vector<CaseRequest> build_cases(const PlanRequest& req, const Selection& s) {
  std::vector<CaseRequest> cases;
  for (std::size_t i = 0; i < s.ops.size(); ++i) {
    const Op* op = s.ops[i];
    for (DType dtype : op->dtypes) {
      if (!req.dtypes.empty() && !contains(req.dtypes, dtype)) continue;
      for (const Shape& shape : shapes_for(*op, req.axes, req.shape_set)) {
        // A shape the op refuses is planned (the worker skips it with the op's reason) but not
        // sized (op_takes_shape).
        if (op_takes_shape(*op, shape)) {
          check_tensor_sizes(*op, dtype, shape);
          // The work model too, at every planned shape: one that cannot answer (an op from a Python
          // file whose work() raises) refuses the plan here, not the run after its cases were measured.
          op->work(shape, dtype);
        }
        for (const Variant* v : s.variants[i])
          for (TunableValues& tunables : tunable_points(*v, req.axes, shape, dtype)) {
            CaseRequest c;
            c.index = static_cast<int>(cases.size());
            c.op = op->name;
            c.variant = v->name;
            c.dtype = dtype;
            c.shape = shape;
            c.tunables = std::move(tunables);
            c.mode = req.mode;
            c.flush = req.flush;
            c.launch = req.launch;
            c.preset = req.preset;
            c.seed = req.seed;
            c.include_test_variants = v->test_only || op->test_only;
            cases.push_back(std::move(c));
          }
      }
    }
  }
  return cases;
}

}  // namespace

std::vector<CaseRequest> plan_cases(const PlanRequest& request, const Registry& registry) {
  const PlanRequest req = normalized(request);
  Selection selection;
  selection.ops = selected_ops(req, registry);
  selection.variants = chosen_variants(req, selection.ops, registry);
  for (const auto& a : req.axes) {
    check_axis_name(a, selection);
    check_tunable_values(a, selection);
  }
  check_case_count(req, selection);
  return build_cases(req, selection);
}

namespace {
// The bytes of the op's tensors at the case's shape, and the variant's workspace when asked for.
double case_bytes(const CaseRequest& c, const Registry& registry, bool with_workspace) {
  const Op* op = registry.find_op(c.op);
  const Variant* v = registry.find_variant(c.op, c.variant);
  if (!op || !v || !op_takes_shape(*op, c.shape)) return 0;  // never allocated: the worker skips it
  long double bytes = 0;
  for (const auto& t : op->tensors(c.shape, c.dtype))
    bytes += element_count(t) * static_cast<long double>(t.element_bytes(c.dtype));
  if (with_workspace && v->workspace_bytes)
    bytes += static_cast<long double>(v->workspace_bytes(c.shape, c.dtype));
  return static_cast<double>(bytes);
}
}  // namespace

double case_device_bytes(const CaseRequest& c, const Registry& registry) {
  return case_bytes(c, registry, true);
}

std::optional<std::string> check_cases_fit(const std::vector<CaseRequest>& cases,
                                           const Registry& registry, double device_bytes,
                                           const std::string& device_name) {
  // The context, the L2 flush buffer and allocator slack need room too.
  const double usable = 0.9 * device_bytes - 512.0 * (1 << 20);
  const CaseRequest* worst = nullptr;
  double worst_bytes = 0;
  int too_big = 0;
  for (const auto& c : cases) {
    // A case its variant refuses is skipped with the variant's reason, and its workspace is never
    // allocated (a variant may refuse precisely because that workspace is too large). Its tensors
    // still count: a shape whose own inputs and outputs cannot fit is too large for every variant,
    // and saying so beats a skip that blames one kernel.
    const Variant* v = registry.find_variant(c.op, c.variant);
    const bool refused = v && v->refuse && v->refuse(c.shape, c.dtype);
    const double b = case_bytes(c, registry, !refused);
    if (b > usable) {
      ++too_big;
      if (b > worst_bytes) worst_bytes = b, worst = &c;
    }
  }
  if (!worst) return std::nullopt;
  constexpr double gib = 1024.0 * 1024 * 1024;
  return fmt::format(
      "{} case(s) need more memory than {} has: the largest, {}:{}:{} at {}, needs {:.1f} GiB "
      "of the {:.1f} GiB usable ({:.1f} GiB total). Use smaller axis values (e.g. halve the "
      "largest axis) or leave that variant out with --variant.",
      too_big, device_name, worst->op, worst->variant, to_string(worst->dtype),
      worst->shape.to_assignments(), worst_bytes / gib, usable / gib, device_bytes / gib);
}

std::string case_identity(const CaseRequest& c) {
  return case_identity(c.op, c.variant, c.dtype, c.shape, c.tunables);
}

FlushKind parse_flush_flag(std::string_view text, Mode mode) {
  const auto kind = parse_flush_kind(text);
  if (!kind)
    throw SettingError(Setting::flush,
                       SettingText(Setting::flush, fmt::format(": unknown flush '{}'; use dirty (memset, the default) "
                                                               "or clean (dirty lines written back first, as Nsight "
                                                               "Compute does)", text)));
  check_flush_for_mode(*kind, mode);
  return *kind;
}

bool flush_fits_mode(FlushKind flush, Mode mode) { return mode != Mode::hot || flush == FlushKind::dirty; }

void check_flush_for_mode(FlushKind flush, Mode mode) {
  if (!flush_fits_mode(flush, mode))
    throw SettingError(Setting::flush, SettingText(Setting::flush, fmt::format(" {}: hot mode flushes nothing; drop ",
                                                                               to_string(flush)),
                                                   Setting::flush, " or use ", Setting::mode, " cold"));
}

std::string repro_command(const CaseRequest& c) {
  std::string cmd = fmt::format("kwb run --op {} --variant {} --dtype {}", c.op, c.variant, to_string(c.dtype));
  for (const auto& [name, value] : c.shape.axes) cmd += fmt::format(" --axis {}={}", name, value.text());
  for (const auto& [name, value] : c.tunables) cmd += fmt::format(" --axis {}={}", name, value);
  cmd += fmt::format(" --mode {} --preset {} --seed {}", to_string(c.mode), c.preset, c.seed);
  if (c.mode == Mode::cold && c.flush != FlushKind::dirty) cmd += fmt::format(" --flush {}", to_string(c.flush));
  if (c.launch != LaunchKind::stream) cmd += fmt::format(" --launch {}", to_string(c.launch));
  if (c.include_test_variants) cmd += " --include-test-variants";
  if (!c.counter_sets.empty()) cmd += fmt::format(" --counters {}", fmt::join(c.counter_sets, ","));
  // The extra metrics: those no asked-for set holds (the duration rides along with any).
  std::vector<std::string> extra;
  for (const std::string& m : c.counter_metrics) {
    bool in_set = m == kDurationMetric;
    for (const CounterSet& s : counter_sets())
      if (std::find(c.counter_sets.begin(), c.counter_sets.end(), s.name) != c.counter_sets.end() &&
          std::find(s.metrics.begin(), s.metrics.end(), m) != s.metrics.end())
        in_set = true;
    if (!in_set) extra.push_back(m);
  }
  // The duration is implied by any other name; asked for alone, it must be named.
  if (c.counter_sets.empty() && extra.empty() && !c.counter_metrics.empty()) extra.push_back(kDurationMetric);
  if (!extra.empty()) cmd += fmt::format(" --metrics {}", fmt::join(extra, ","));
  return cmd;
}

}  // namespace kwb
