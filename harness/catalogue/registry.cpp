// The process-wide catalogue that static registrars fill before main(), and the check of what
// they registered.
#include "harness/catalogue/registry.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "harness/catalogue/math_label.hpp"
#include "harness/catalogue/shape_label.hpp"

namespace kwb {

std::int64_t TensorSpec::numel() const {
  std::int64_t n = 1;
  for (auto d : dims) n *= d;
  return n;
}

double bytes_of(const TensorSpec& spec, DType case_dtype) {
  return static_cast<double>(spec.numel()) * static_cast<double>(spec.element_bytes(case_dtype));
}

double tensor_bytes(const std::vector<TensorSpec>& specs, DType case_dtype) {
  double bytes = 0;
  for (const auto& t : specs) bytes += bytes_of(t, case_dtype);
  return bytes;
}

std::string_view to_string(Distribution::Kind kind) {
  switch (kind) {
    case Distribution::Kind::normal: return "normal";
    case Distribution::Kind::uniform: return "uniform";
    case Distribution::Kind::integers: return "integers";
    case Distribution::Kind::position_ids: return "position_ids";
    case Distribution::Kind::permutation: return "permutation";
    case Distribution::Kind::offsets: return "offsets";
    case Distribution::Kind::mask: return "mask";
    case Distribution::Kind::doubly_stochastic: return "doubly_stochastic";
    case Distribution::Kind::derived: return "derived";
  }
  return "?";
}

Registry& Registry::instance() {
  static Registry registry;  // constructed on first use: safe from any static initialiser
  return registry;
}

std::int64_t LaunchArgs::tunable(std::string_view name) const {
  if (tunables)
    for (const auto& [n, value] : *tunables)
      if (n == name) return value;
  throw std::out_of_range("the case has no tunable '" + std::string(name) +
                          "': declare it in the variant's .tunables");
}

void* LaunchArgs::tensor_data(std::string_view name, std::size_t elem_bytes) const {
  if (specs)
    for (std::size_t i = 0; i < specs->size() && i < tensors.size(); ++i) {
      const TensorSpec& spec = (*specs)[i];
      if (spec.name != name) continue;
      if (elem_bytes != 0 && elem_bytes != spec.element_bytes(dtype))
        throw std::logic_error("tensor '" + spec.name + "' holds " + std::to_string(spec.element_bytes(dtype)) +
                               "-byte elements, read as " + std::to_string(elem_bytes) +
                               "-byte ones: name its storage type");
      return tensors[i];
    }
  std::string known;
  if (specs)
    for (const TensorSpec& spec : *specs) known += (known.empty() ? "" : ", ") + spec.name;
  throw std::out_of_range("the op has no tensor '" + std::string(name) + "'" +
                          (specs ? " (its tensors: " + known + ")" : " (the launch was given no tensor names)"));
}

std::int64_t default_value(const Tunable& t, const Shape& shape, DType dtype) {
  if (t.shape_default) return t.shape_default(shape, dtype);
  return t.values.empty() ? 0 : t.values.front();
}

TunableValues default_tunables(const Variant& v, const Shape& shape, DType dtype) {
  TunableValues out;
  for (const Tunable& t : v.tunables) out.push_back({t.name, default_value(t, shape, dtype)});
  return out;
}

std::string default_text(const Tunable& t) {
  if (t.shape_default) return "per shape: " + t.default_rule;
  return t.values.empty() ? std::string("none") : std::to_string(t.values.front());
}

void Registry::add(Op op) {
  if (find_op(op.name)) {
    add_problems_.push_back("op '" + op.name +
                            "' is registered twice: rename one (op names are unique)");
    return;
  }
  ops_.push_back(std::move(op));
}

void Registry::add(Variant variant) {
  if (find_variant(variant.op, variant.name)) {
    add_problems_.push_back("variant '" + variant.op + ":" + variant.name +
                            "' is registered twice: rename one (variant names are unique per op)");
    return;
  }
  variants_.push_back(std::move(variant));
}

namespace {

void check_op(const Op& op, std::vector<std::string>& out) {
  const std::string where = "op '" + op.name + "'";
  if (op.name.empty()) out.push_back("an op has an empty name: give it a name");
  if (op.dtypes.empty()) out.push_back(where + " declares no dtypes: list at least one in .dtypes");
  if (!op.tensors) out.push_back(where + " has no .tensors function");
  if (!op.work) out.push_back(where + " has no .work function (the work model)");
  if (!op.oracle && !op.positional_oracle) out.push_back(where + " has no .oracle function");
  if (op.oracle && op.positional_oracle)
    out.push_back(where + " sets both .oracle and .positional_oracle; keep one");
  std::set<std::string> names;
  for (const AxisSpec& a : op.axes) {
    if (!names.insert(a.name).second)
      out.push_back(where + " declares axis '" + a.name + "' twice: axis names are unique per op");
    std::set<std::string> choices;
    for (const auto& c : a.choices) {
      if (c.empty() || c.find_first_of(",=: \t") != std::string::npos)
        out.push_back(where + " axis '" + a.name + "' has choice '" + c +
                      "': choice names are non-empty and contain no ',', '=', ':' or spaces");
      if (!choices.insert(c).second)
        out.push_back(where + " axis '" + a.name + "' lists choice '" + c + "' twice");
    }
  }
  // Labels are all or nothing: an integer without one would read as a bare number among labelled
  // ones ("b4 4096 h32"), which no reader can place.
  // A 0/1 choice without a label would vanish at 1 too ("causal" reads as its label alone).
  const bool labelled = any_labelled(op.axes);
  for (const AxisSpec& a : op.axes) {
    if (labelled && a.label.empty() && (!a.is_choice() || a.is_flag()))
      out.push_back(where + " labels some axes but not " + (a.is_flag() ? "0/1 choice" : "integer") + " axis '" + a.name +
                    "': give it a .label (how it reads in tables, as \"s\" in s4096) or label none");
  }
  if (!op.sample_axis.empty() && !names.count(op.sample_axis))
    out.push_back(where + " names sample_axis '" + op.sample_axis + "', which is not one of its axes");
  if (op.unaligned_from_whole_inputs && (!op.positional_oracle || op.sample_axis.empty()))
    out.push_back(where + " sets .unaligned_from_whole_inputs, which needs a .positional_oracle (it is told which "
                          "indices of the sample axis to give) and a sample_axis");
  if (op.unaligned_from_whole_inputs && op.device_unaligned_oracle)
    out.push_back(where + " sets both .unaligned_from_whole_inputs and .device_unaligned_oracle: the host oracle "
                          "then gives the unaligned outputs and the device oracle is never used; keep one");
  if (op.device_unaligned_oracle && op.sample_axis.empty())
    out.push_back(where + " sets .device_unaligned_oracle but no sample_axis: with nothing sampled it is never "
                          "used; remove it or name the axis");
  // Derived inputs and derive_inputs go together: looked at in the default shapes' tensors.
  if (op.tensors && !op.dtypes.empty()) {
    bool derived = false;
    for (const Shape& s : op.default_shapes) {
      if (op.invalid && op.invalid(s)) continue;  // reported below
      for (const TensorSpec& t : op.tensors(s, op.dtypes.front()))
        derived = derived || (!t.is_output && t.init.kind == Distribution::Kind::derived);
    }
    if (derived && !op.derive_inputs)
      out.push_back(where + " has inputs of Distribution::derived but no .derive_inputs to compute them");
    if (!derived && op.derive_inputs && !op.default_shapes.empty())
      out.push_back(where + " sets .derive_inputs but none of its inputs is Distribution::derived (at its default "
                            "shapes): mark the inputs it writes derived, or remove it");
  }
  auto check_shapes = [&](const std::vector<Shape>& shapes, const char* which) {
    for (const Shape& s : shapes) {
      bool fits = s.axes.size() == op.axes.size();
      for (std::size_t i = 0; fits && i < s.axes.size(); ++i) {
        const AxisSpec& a = op.axes[i];
        const AxisValue& v = s.axes[i].second;
        fits = s.axes[i].first == a.name && v.is_choice() == a.is_choice() &&
               (!v.is_choice() || std::count(a.choices.begin(), a.choices.end(), v.choice()));
      }
      if (!fits)
        out.push_back(where + " " + which + " shape '" + s.to_assignments() +
                      "' does not match its axes (every axis, in order, each a valid value)");
      else if (op.invalid)
        if (auto why = op.invalid(s))
          out.push_back(where + " " + which + " shape '" + s.to_assignments() + "' is invalid for the op: " + *why);
    }
  };
  check_shapes(op.default_shapes, "default");
  check_shapes(op.edge_shapes, "edge");
}

void check_variant(const Variant& v, const Op* op, std::vector<std::string>& out) {
  const std::string where = "variant '" + v.op + ":" + v.name + "'";
  if (!op) {
    out.push_back(where + " names op '" + v.op +
                  "', which is not registered: fix .op (`kwb list` shows the ops)");
    return;
  }
  if (!v.launch) out.push_back(where + " has no .launch function");
  for (const std::string& p : math_declaration_problems(*op, v)) out.push_back(p);
  for (const std::string& library : v.uses)
    if (library.empty() || library.find_first_of("+,;") != std::string::npos)
      out.push_back(where + " .uses names \"" + library + "\": name each library by itself (\"cuBLASLt\"), "
                    "one entry per library");
  std::set<std::string> names;
  for (const Tunable& t : v.tunables) {
    if (!names.insert(t.name).second)
      out.push_back(where + " declares tunable '" + t.name + "' twice");
    if (t.values.empty())
      out.push_back(where + " tunable '" + t.name + "' has no values: list at least its default");
    for (auto value : t.values)
      if (value <= 0)
        out.push_back(where + " tunable '" + t.name + "' has value " + std::to_string(value) +
                      ": tunable values are positive (--axis accepts only positive integers)");
    for (const AxisSpec& a : op->axes)
      if (a.name == t.name)
        out.push_back(where + " tunable '" + t.name + "' has the name of an axis of op '" +
                      op->name + "': rename the tunable (both are set with --axis)");
    if (t.shape_default) {
      if (t.default_rule.empty())
        out.push_back(where + " tunable '" + t.name + "' picks its default per shape but has no default_rule: "
                      "say in a few words how it picks");
      // The pick must be a declared value at every shape the op sweeps by default or at its edges.
      for (const auto* shapes : {&op->default_shapes, &op->edge_shapes})
        for (const Shape& s : *shapes)
          for (DType d : op->dtypes) {
            const auto value = t.shape_default(s, d);
            if (std::find(t.values.begin(), t.values.end(), value) == t.values.end())
              out.push_back(where + " tunable '" + t.name + "' picks " + std::to_string(value) + " at " +
                            s.to_compact() + " " + std::string(to_string(d)) +
                            ", which is not among its declared values: declare it or fix the rule");
          }
    }
  }
}

}  // namespace

std::vector<std::string> Registry::problems() const {
  std::vector<std::string> out = add_problems_;
  for (const Op& op : ops_) check_op(op, out);
  for (const Variant& v : variants_) check_variant(v, find_op(v.op), out);
  // --axis picks its grammar (integers or choice names) by the axis name alone, so one name must
  // mean one kind across the catalogue; the same for a tunable (always an integer).
  std::map<std::string, std::pair<bool, std::string>> kind;  // axis name -> (is choice, op)
  for (const Op& op : ops_)
    for (const AxisSpec& a : op.axes) {
      auto [it, fresh] = kind.insert({a.name, {a.is_choice(), op.name}});
      if (!fresh && it->second.first != a.is_choice())
        out.push_back("axis '" + a.name + "' is a " + (a.is_choice() ? "choice" : "integer") +
                      " axis in op '" + op.name + "' but a " +
                      (it->second.first ? "choice" : "integer") + " axis in op '" +
                      it->second.second + "': rename one (--axis must know how to read it)");
    }
  for (const Variant& v : variants_)
    for (const Tunable& t : v.tunables) {
      auto it = kind.find(t.name);
      if (it != kind.end() && it->second.first)
        out.push_back("variant '" + v.op + ":" + v.name + "' tunable '" + t.name +
                      "' has the name of a choice axis of op '" + it->second.second +
                      "': rename the tunable (both are set with --axis)");
    }
  return out;
}

const Op* Registry::find_op(std::string_view name) const {
  for (const auto& op : ops_)
    if (op.name == name) return &op;
  return nullptr;
}

std::vector<const Variant*> Registry::variants(std::string_view op, bool include_test_only) const {
  std::vector<const Variant*> out;
  for (const auto& v : variants_)
    if (v.op == op && (include_test_only || !v.test_only)) out.push_back(&v);
  return out;
}

const Variant* Registry::find_variant(std::string_view op, std::string_view name) const {
  for (const auto& v : variants_)
    if (v.op == op && v.name == name) return &v;
  return nullptr;
}

std::vector<std::string> Registry::op_names(bool include_test_only) const {
  std::vector<std::string> out;
  for (const auto& op : ops_)
    if (include_test_only || !op.test_only) out.push_back(op.name);
  return out;
}

namespace {

// "plugin /abs/libmine.so" or "built into kwb": one side of a clash.
std::string source_text(const PluginSource* source) {
  return source ? "of plugin " + source->path : "built into kwb";
}

template <class Key>
const PluginSource* find_source(const std::vector<std::pair<std::string, PluginSource>>& sources, const Key& key) {
  for (const auto& [name, source] : sources)
    if (name == key) return &source;
  return nullptr;
}

}  // namespace

// Merged into a copy, so that a plugin with any problem leaves the catalogue as it was: the copy
// is checked whole (a plugin variant of a built-in op is checked against that op) and only then
// replaces this registry.
std::vector<std::string> Registry::adopt(const Registry& plugin, const PluginSource& source) {
  const std::string from = "plugin " + source.path;
  std::vector<std::string> out;
  for (const std::string& p : plugin.add_problems_) out.push_back(from + ": " + p);
  Registry merged = *this;
  for (const Op& op : plugin.ops_) {
    if (merged.find_op(op.name)) {
      out.push_back("op '" + op.name + "' of " + from + " clashes with op '" + op.name + "' " +
                    source_text(merged.source_of_op(op.name)) + ": rename the plugin's op (op names are unique)");
      continue;
    }
    merged.ops_.push_back(op);
    merged.op_sources_.emplace_back(op.name, source);
  }
  for (const Variant& v : plugin.variants_) {
    const std::string id = v.op + ":" + v.name;
    if (merged.find_variant(v.op, v.name)) {
      out.push_back("variant '" + id + "' of " + from + " clashes with variant '" + id + "' " +
                    source_text(merged.source_of_variant(v.op, v.name)) +
                    ": rename the plugin's variant (variant names are unique per op)");
      continue;
    }
    merged.variants_.push_back(v);
    merged.variant_sources_.emplace_back(id, source);
  }
  const std::vector<std::string> before = problems();
  for (const std::string& p : merged.problems())
    if (std::find(before.begin(), before.end(), p) == before.end()) out.push_back(from + ": " + p);
  if (!out.empty()) return out;
  merged.plugins_.push_back(source);
  *this = std::move(merged);
  return out;
}

const PluginSource* Registry::source_of_op(std::string_view op) const { return find_source(op_sources_, op); }

const PluginSource* Registry::source_of_variant(std::string_view op, std::string_view variant) const {
  return find_source(variant_sources_, std::string(op) + ":" + std::string(variant));
}

std::vector<std::string> Registry::variant_names(bool include_test_only) const {
  std::vector<std::string> out;
  for (const auto& v : variants_)
    if (include_test_only || !v.test_only) out.push_back(v.name);
  return out;
}

}  // namespace kwb
