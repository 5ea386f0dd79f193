#include "reports/catalogue/catalogue_markdown.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "harness/catalogue/elem_type.hpp"
#include "harness/catalogue/math_label.hpp"
#include "harness/catalogue/shape_label.hpp"

namespace kwb {
namespace {

std::string joined(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : separator) + p;
  return out;
}

// Markdown table cells hold no pipes or newlines.
std::string cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

std::string number(double v) {
  if (v == static_cast<double>(static_cast<std::int64_t>(v))) return std::to_string(static_cast<std::int64_t>(v));
  return fmt::format("{:g}", v);
}

std::string distribution_text(const Distribution& d, const Shape& example) {
  using K = Distribution::Kind;
  switch (d.kind) {
    case K::normal: return fmt::format("normal(mean {}, std {})", number(d.a), number(d.b));
    case K::uniform: return fmt::format("uniform [{}, {})", number(d.a), number(d.b));
    case K::integers: {
      std::string text = fmt::format("integers in [{}, {})", number(d.a),
                                     symbolic_dim(static_cast<std::int64_t>(d.b), example));
      if (d.ignore_fraction > 0)
        text += fmt::format(", {}% set to {}", number(100 * d.ignore_fraction), d.ignore_value);
      return text;
    }
    case K::position_ids:
      return fmt::format("position ids: i mod {}, + a start per sequence in [0, {}]",
                         symbolic_dim(d.period, example), number(d.a));
    case K::permutation: return "a random permutation";
    case K::offsets: return fmt::format("offsets 0 < ... < {}", symbolic_dim(d.total, example));
    case K::mask: return fmt::format("mask, true with probability {}", number(d.a));
    case K::doubly_stochastic:
      return fmt::format("{0}x{0} doubly stochastic blocks (random mixtures of the {0}! permutations)",
                         d.period);
    case K::derived: return "derived from the other inputs (the op's derive_inputs)";
  }
  return "?";
}

std::string elem_text(ElemType e) { return e == ElemType::case_dtype ? "dtype" : std::string(to_string(e)); }

// Dim `index` of the tensor named `name` at another shape of the op (nullopt where the op cannot
// give that shape's tensors or the tensor's rank changes).
DimAt dim_of(const Op* op, DType dtype, const std::string& name, std::size_t index) {
  if (!op) return {};
  return [op, dtype, name, index](const Shape& shape) -> std::optional<std::int64_t> {
    try {
      for (const TensorSpec& t : op->tensors(shape, dtype))
        if (t.name == name && index < t.dims.size()) return t.dims[index];
    } catch (const std::exception&) {
    }
    return std::nullopt;
  };
}

std::string dims_text(const TensorSpec& t, const Shape& example, const Op& op, DType dtype) {
  std::vector<std::string> dims;
  for (std::size_t i = 0; i < t.dims.size(); ++i) dims.push_back(symbolic_dim(t.dims[i], example, dim_of(&op, dtype, t.name, i)));
  return "[" + joined(dims, ", ") + "]";
}

void write_op(std::string& out, const Op& op, const Registry& registry) {
  const Shape example = example_shape(op);
  out += fmt::format("## {}\n\n{}\n\n", op.name, op.description);
  std::vector<std::string> dtypes;
  for (auto d : op.dtypes) dtypes.push_back(std::string(to_string(d)));
  out += fmt::format("- dtypes: {}; arithmetic on {}\n", joined(dtypes, ", "),
                      op.compute_unit == "tensor" ? "the tensor cores (fp32 cases in tf32)" : op.compute_unit);
  out += fmt::format("- verification samples along: {}\n",
                     op.sample_axis.empty() ? "nothing (every case verified in full)" : "`" + op.sample_axis + "`");
  out += "\n| axis | default | meaning |\n|---|---|---|\n";
  for (const auto& a : op.axes) {
    const std::string value = a.is_choice() ? "one of " + joined(a.choices, ", ") + " (default " + a.choices.front() + ")"
                                            : std::to_string(a.default_value);
    out += fmt::format("| `{}` | {} | {} |\n", a.name, cell(value), cell(a.help));
  }
  const DType first_dtype = op.dtypes.empty() ? DType::fp32 : op.dtypes.front();
  const auto tensors = op.tensors(example, first_dtype);
  out += "\n| tensor | | dims | element | values |\n|---|---|---|---|---|\n";
  for (const auto& t : tensors)
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", t.name, t.is_output ? "out" : "in",
                       dims_text(t, example, op, first_dtype), elem_text(t.elem),
                       t.is_output ? "" : cell(distribution_text(t.init, example)));
  out += fmt::format("\nBytes (each input read once, each output written once; s = dtype size): {}",
                     bytes_formula(tensors, example, &op, first_dtype));
  if (op.work) {
    const DType d = op.dtypes.empty() ? DType::fp32 : op.dtypes.front();
    const double model = op.work(example, d).bytes;
    if (model != tensor_bytes(op.tensors(example, d), d))
      out += fmt::format(" (the work model counts {} bytes at {} in {}: see the op's source)", number(model),
                         example.to_compact(), to_string(d));
  }
  out += "\n\n";
  std::vector<std::string> shapes;
  for (const auto& s : op.default_shapes) shapes.push_back("`" + shape_label(s, op.axes) + "`");
  if (!shapes.empty()) out += fmt::format("Default shapes ({}): {}\n\n", op.default_shapes.size(), joined(shapes, ", "));
  shapes.clear();
  for (const auto& s : op.edge_shapes) shapes.push_back("`" + shape_label(s, op.axes) + "`");
  if (!shapes.empty()) out += fmt::format("Edge shapes ({}): {}\n\n", op.edge_shapes.size(), joined(shapes, ", "));
  out += "| variant | role | math | uses | what it changes and why |\n|---|---|---|---|---|\n";
  for (const Variant* v : registry.variants(op.name, false)) {
    std::string what = v->description;
    for (const Tunable& t : v->tunables) {
      std::vector<std::string> values;
      for (auto x : t.values) values.push_back(std::to_string(x));
      what += fmt::format("; tunable `{}` = {} (default {})", t.name, joined(values, ", "), default_text(t));
    }
    // What `kwb select --deterministic` leaves out: named here so a reader can see it up front.
    if (v->varies_run_to_run) what += "; **varies run to run** (last bits; `kwb select --deterministic` leaves it out)";
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", v->name, to_string(v->role), cell(math_summary(op, *v)),
                       v->uses.empty() ? "-" : cell(uses_text(v->uses)), cell(what));
  }
  out += "\n";
}

}  // namespace

Shape example_shape(const Op& op) {
  if (!op.default_shapes.empty()) return op.default_shapes.front();
  Shape s;
  for (const auto& a : op.axes) s.axes.push_back({a.name, a.default_axis_value()});
  return s;
}

std::string symbolic_dim(std::int64_t dim, const Shape& example, const DimAt& at) {
  std::vector<std::pair<std::string, std::int64_t>> ints;
  for (const auto& [name, value] : example.axes)
    if (!value.is_choice()) ints.push_back({name, value.integer()});
  // Whether the dim is `expected` at the example with axis `name` doubled (always, without `at`).
  auto follows = [&](const std::string& name, std::int64_t expected) {
    if (!at) return true;
    Shape doubled = example;
    for (auto& [axis, value] : doubled.axes)
      if (axis == name) value = AxisValue(2 * value.integer());
    const auto got = at(doubled);
    return got && *got == expected;
  };
  for (const auto& [name, v] : ints)
    if (v == dim && follows(name, 2 * v)) return name;
  for (const auto& [name, v] : ints)
    if (v % 2 == 0 && v / 2 == dim && follows(name, v)) return name + "/2";
  for (const auto& [name, v] : ints)
    if (v + 1 == dim && follows(name, 2 * v + 1)) return name + "+1";
  for (std::size_t i = 0; i < ints.size(); ++i)
    for (std::size_t j = i + 1; j < ints.size(); ++j)
      if (ints[i].second * ints[j].second == dim && follows(ints[i].first, 2 * dim) && follows(ints[j].first, 2 * dim))
        return ints[i].first + "·" + ints[j].first;
  return std::to_string(dim);
}

std::string bytes_formula(const std::vector<TensorSpec>& tensors, const Shape& example, const Op* op, DType dtype) {
  // Terms grouped by element size, like terms added: 2·rows·cols + cols.
  std::map<std::string, std::map<std::string, int>> by_size;  // size text -> term -> count
  std::vector<std::string> size_order;
  for (const auto& t : tensors) {
    std::vector<std::string> factors;
    for (std::size_t i = 0; i < t.dims.size(); ++i)
      factors.push_back(symbolic_dim(t.dims[i], example, dim_of(op, dtype, t.name, i)));
    const std::string term = factors.empty() ? "1" : joined(factors, "·");
    const std::string size = t.elem == ElemType::case_dtype ? "s" : std::to_string(elem_size(t.elem));
    if (!by_size.count(size)) size_order.push_back(size);
    by_size[size][term] += 1;
  }
  std::vector<std::string> groups;
  for (const auto& size : size_order) {
    std::vector<std::string> terms;
    for (const auto& [term, count] : by_size[size]) terms.push_back(count == 1 ? term : std::to_string(count) + "·" + term);
    const std::string sum = joined(terms, " + ");
    groups.push_back(terms.size() == 1 ? (size == "s" ? sum + "·s" : size + "·" + sum)
                                       : (size == "s" ? "(" + sum + ")·s" : size + "·(" + sum + ")"));
  }
  return joined(groups, " + ");
}

std::string catalogue_markdown(const Registry& registry) {
  // By name, so the page does not depend on the order the linker ran the registrations in.
  std::vector<const Op*> ops;
  for (const auto& op : registry.ops())
    if (!op.test_only) ops.push_back(&op);
  std::sort(ops.begin(), ops.end(), [](const Op* a, const Op* b) { return a->name < b->name; });
  std::string out =
      "# Kernel catalogue\n\n"
      "Generated from the registry by `kwb list --markdown`; do not edit by hand (a CPU test "
      "regenerates this page and fails when it differs). Dims are written in axis names at each "
      "op's first default shape. A variant's math is the arithmetic it runs in (per dtype where they "
      "differ), its uses the libraries it calls:\n\n";
  for (const MathLabel& m : kMathLabels) out += fmt::format("- `{}`: {}\n", m.label, m.meaning);
  out += "\n| op | what | variants |\n|---|---|---|\n";
  for (const Op* op : ops) {
    std::vector<std::string> names;
    for (const Variant* v : registry.variants(op->name, false)) names.push_back("`" + v->name + "`");
    out += fmt::format("| [`{}`](#{}) | {} | {} |\n", op->name, op->name, cell(op->description), joined(names, ", "));
  }
  out += "\n";
  for (const Op* op : ops) write_op(out, *op, registry);
  return out;
}

}  // namespace kwb
