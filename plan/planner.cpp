// Filters -> cases, the memory check and the repro command line.
#include "plan/planner.hpp"

#include <algorithm>
#include <fmt/format.h>

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

}  // namespace

std::vector<CaseRequest> plan_cases(const PlanRequest& req, const Registry& registry) {
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
  // 4. Cases.
  std::vector<CaseRequest> cases;
  for (const Op* op : ops) {
    auto variants = registry.variants(op->name, req.include_test_variants);
    std::stable_partition(variants.begin(), variants.end(),
                          [](const Variant* v) { return v->role == Role::baseline; });
    std::vector<const Variant*> chosen;
    for (const Variant* v : variants)
      if (req.variants.empty() ? true : contains(req.variants, v->name)) chosen.push_back(v);
    for (DType dtype : op->dtypes) {
      if (!req.dtypes.empty() && !contains(req.dtypes, dtype)) continue;
      for (const Shape& shape : shapes_for(*op, req.axes))
        for (const Variant* v : chosen) {
          CaseRequest c;
          c.index = static_cast<int>(cases.size());
          c.op = op->name;
          c.variant = v->name;
          c.dtype = dtype;
          c.shape = shape;
          c.mode = req.mode;
          c.flush = req.flush;
          c.preset = req.preset;
          c.seed = req.seed;
          c.include_test_variants = v->test_only;
          cases.push_back(std::move(c));
        }
    }
  }
  return cases;
}

double case_device_bytes(const CaseRequest& c, const Registry& registry) {
  const Op* op = registry.find_op(c.op);
  const Variant* v = registry.find_variant(c.op, c.variant);
  if (!op || !v) return 0;
  double bytes = 0;
  for (const auto& t : op->tensors(c.shape, c.dtype))
    bytes += static_cast<double>(t.numel()) * static_cast<double>(dtype_size(c.dtype));
  if (v->workspace_bytes) bytes += static_cast<double>(v->workspace_bytes(c.shape, c.dtype));
  return bytes;
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

FlushKind parse_flush_flag(std::string_view text, Mode mode) {
  const auto kind = parse_flush_kind(text);
  if (!kind)
    throw PlanError(fmt::format("--flush: unknown flush '{}'; use dirty (memset, the default) or clean "
                                "(dirty lines written back first, as Nsight Compute does)", text));
  if (mode == Mode::hot && *kind != FlushKind::dirty)
    throw PlanError(fmt::format("--flush {}: hot mode flushes nothing; drop --flush or use --mode cold", text));
  return *kind;
}

std::string repro_command(const CaseRequest& c) {
  std::string cmd = fmt::format("kwb run --op {} --variant {} --dtype {}", c.op, c.variant, to_string(c.dtype));
  for (const auto& [name, value] : c.shape.axes) cmd += fmt::format(" --axis {}={}", name, value);
  cmd += fmt::format(" --mode {} --preset {} --seed {}", to_string(c.mode), c.preset, c.seed);
  if (c.mode == Mode::cold && c.flush != FlushKind::dirty) cmd += fmt::format(" --flush {}", to_string(c.flush));
  if (c.include_test_variants) cmd += " --include-test-variants";
  return cmd;
}

}  // namespace kwb
