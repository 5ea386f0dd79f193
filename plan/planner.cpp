// Filters -> cases, the memory check and the repro command line.
#include "plan/planner.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

#include "plan/suggest.hpp"

namespace kwb {
namespace {

template <class T>
bool contains(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::vector<Shape> shapes_for(const Op& op, const std::vector<AxisAssignment>& axes) {
  if (axes.empty()) {
    if (!op.default_shapes.empty()) return op.default_shapes;
    Shape s;
    for (const auto& a : op.axes) s.axes.push_back({a.name, a.default_value});
    return {s};
  }
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> grid;
  for (const auto& a : op.axes) {
    auto given = std::find_if(axes.begin(), axes.end(), [&](const auto& x) { return x.name == a.name; });
    grid.push_back({a.name, given != axes.end() ? given->values : std::vector<std::int64_t>{a.default_value}});
  }
  return expand_sweep(grid);
}

template <class T>
std::vector<T> without_repeats(const std::vector<T>& values) {
  std::vector<T> out;
  for (const auto& v : values)
    if (!contains(out, v)) out.push_back(v);
  return out;
}

// Elements of a tensor, exact while below 2^64 and never wrapped around.
long double element_count(const TensorSpec& t) {
  long double n = 1;
  for (auto d : t.dims) n *= static_cast<long double>(d);
  return n;
}

// How many shapes shapes_for() would give, without building them.
long double shape_count(const Op& op, const std::vector<AxisAssignment>& axes) {
  if (axes.empty()) return op.default_shapes.empty() ? 1.0L : static_cast<long double>(op.default_shapes.size());
  long double n = 1;
  for (const auto& a : op.axes) {
    auto given = std::find_if(axes.begin(), axes.end(), [&](const auto& x) { return x.name == a.name; });
    if (given != axes.end()) n *= static_cast<long double>(given->values.size());
  }
  return n;
}

// "rows=1:4096:+1" style summary of the product for one op: "4096 rows x 4096 cols x 3 dtypes x 4 variants".
std::string product_text(const Op& op, const std::vector<AxisAssignment>& axes, std::size_t dtypes,
                         std::size_t variants) {
  std::string text;
  for (const auto& a : op.axes) {
    auto given = std::find_if(axes.begin(), axes.end(), [&](const auto& x) { return x.name == a.name; });
    if (given != axes.end()) text += fmt::format("{} {} x ", given->values.size(), a.name);
  }
  if (axes.empty()) text += fmt::format("{} default shapes x ", std::max<std::size_t>(1, op.default_shapes.size()));
  return text + fmt::format("{} dtype(s) x {} variant(s)", dtypes, variants);
}

void check_tensor_sizes(const CaseRequest& c, const Op& op) {
  constexpr long double kMaxBytes = static_cast<long double>(std::numeric_limits<std::int64_t>::max());
  for (const auto& t : op.tensors(c.shape, c.dtype)) {
    const long double bytes = element_count(t) * static_cast<long double>(dtype_size(c.dtype));
    if (bytes > kMaxBytes)
      throw PlanError(fmt::format(
          "tensor '{}' of {} at {} would need {:.3g} bytes, more than 64-bit sizes can count (and far "
          "more than any GPU holds); use smaller --axis values",
          t.name, c.op, c.shape.to_assignments(), bytes));
  }
}

}  // namespace

std::vector<CaseRequest> plan_cases(const PlanRequest& request, const Registry& registry) {
  PlanRequest req = request;
  req.ops = without_repeats(req.ops);
  req.variants = without_repeats(req.variants);
  req.dtypes = without_repeats(req.dtypes);
  for (std::size_t i = 0; i < req.axes.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (req.axes[i].name == req.axes[j].name)
        throw PlanError(fmt::format("--axis: axis '{}' is given twice; give all its values in one --axis, "
                                    "e.g. --axis {}=512,4096 or a range {}=512:4096:x2",
                                    req.axes[i].name, req.axes[i].name, req.axes[i].name));
  // 1. Ops.
  std::vector<const Op*> ops;
  if (req.ops.empty()) {
    for (const auto& op : registry.ops()) ops.push_back(&op);
  } else {
    for (const auto& name : req.ops) {
      const Op* op = registry.find_op(name);
      if (!op) throw PlanError(unknown_name_message("op", name, registry.op_names()) +
                               "; `kwb list` shows every op");
      ops.push_back(op);
    }
  }
  // 2. Variant names must exist in a selected op.
  for (const auto& name : req.variants) {
    const Variant* found = nullptr;
    std::vector<std::string> known;
    for (const Op* op : ops) {
      for (const Variant* v : registry.variants(op->name, true)) {
        if (v->name == name) found = v;
        if (!v->test_only) known.push_back(v->name);
      }
    }
    if (!found) throw PlanError(unknown_name_message("variant", name, known));
    if (found->test_only && !req.include_test_variants)
      throw PlanError("variant '" + name + "' is a test-only variant (it faults or hangs on purpose); "
                      "add --include-test-variants to run it");
  }
  // 3. Axis names must belong to a selected op.
  for (const auto& a : req.axes) {
    std::vector<std::string> known;
    bool ok = false;
    for (const Op* op : ops)
      for (const auto& spec : op->axes) {
        known.push_back(spec.name);
        ok = ok || spec.name == a.name;
      }
    if (!ok) throw PlanError(unknown_name_message("axis", a.name, known));
  }
  // 4. Count before building: two ranges of 4096 values would be 16M shapes per variant.
  struct OpPlan {
    const Op* op;
    std::vector<const Variant*> chosen;
    std::vector<DType> dtypes;
  };
  std::vector<OpPlan> op_plans;
  long double total = 0;
  std::string biggest;
  long double biggest_count = -1;
  for (const Op* op : ops) {
    auto variants = registry.variants(op->name, req.include_test_variants);
    std::stable_partition(variants.begin(), variants.end(),
                          [](const Variant* v) { return v->role == Role::baseline; });
    OpPlan p{op, {}, {}};
    for (const Variant* v : variants)
      if (req.variants.empty() ? true : contains(req.variants, v->name)) p.chosen.push_back(v);
    for (DType dtype : op->dtypes)
      if (req.dtypes.empty() || contains(req.dtypes, dtype)) p.dtypes.push_back(dtype);
    const long double n = shape_count(*op, req.axes) * static_cast<long double>(p.dtypes.size()) *
                          static_cast<long double>(p.chosen.size());
    total += n;
    if (n > biggest_count) {
      biggest_count = n;
      biggest = op->name + ": " + product_text(*op, req.axes, p.dtypes.size(), p.chosen.size());
    }
    op_plans.push_back(std::move(p));
  }
  if (total > static_cast<long double>(req.max_cases))
    throw PlanError(fmt::format("the plan has {:.0f} cases ({}), more than the limit of {}; narrow the --axis "
                                "ranges or filter with --op, --variant and --dtype, or raise the limit with "
                                "--max-cases N",
                                total, biggest, req.max_cases));
  // 5. Cases.
  std::vector<CaseRequest> cases;
  for (const auto& [op, chosen, dtypes] : op_plans) {
    for (DType dtype : dtypes) {
      for (const Shape& shape : shapes_for(*op, req.axes)) {
        CaseRequest probe;
        probe.op = op->name;
        probe.dtype = dtype;
        probe.shape = shape;
        check_tensor_sizes(probe, *op);
        for (const Variant* v : chosen) {
          CaseRequest c;
          c.index = static_cast<int>(cases.size());
          c.op = op->name;
          c.variant = v->name;
          c.dtype = dtype;
          c.shape = shape;
          c.mode = req.mode;
          c.preset = req.preset;
          c.seed = req.seed;
          c.include_test_variants = v->test_only;
          cases.push_back(std::move(c));
        }
      }
    }
  }
  return cases;
}

double case_device_bytes(const CaseRequest& c, const Registry& registry) {
  const Op* op = registry.find_op(c.op);
  const Variant* v = registry.find_variant(c.op, c.variant);
  if (!op || !v) return 0;
  long double bytes = 0;
  for (const auto& t : op->tensors(c.shape, c.dtype))
    bytes += element_count(t) * static_cast<long double>(dtype_size(c.dtype));
  if (v->workspace_bytes) bytes += static_cast<long double>(v->workspace_bytes(c.shape, c.dtype));
  return static_cast<double>(bytes);
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
    const double b = case_device_bytes(c, registry);
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

std::string repro_command(const CaseRequest& c) {
  std::string cmd = fmt::format("kwb run --op {} --variant {} --dtype {}", c.op, c.variant, to_string(c.dtype));
  for (const auto& [name, value] : c.shape.axes) cmd += fmt::format(" --axis {}={}", name, value);
  cmd += fmt::format(" --mode {} --preset {} --seed {}", to_string(c.mode), c.preset, c.seed);
  if (c.include_test_variants) cmd += " --include-test-variants";
  return cmd;
}

}  // namespace kwb
