// Math labels: the vocabulary's defaults, a variant's declaration read per dtype, and its checks.
#include "harness/catalogue/math_label.hpp"

#include <algorithm>

#include "harness/catalogue/registry.hpp"

namespace kwb {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string known_labels() {
  std::string out;
  for (const MathLabel& m : kMathLabels) out += (out.empty() ? "\"" : ", \"") + std::string(m.label) + "\"";
  return out;
}

// Variant::math read: one label for every dtype, or per-dtype entries; `problems` says what
// could not be read (the entry is then left out).
struct MathDeclaration {
  std::optional<std::string> every_dtype;
  std::vector<std::pair<DType, std::string>> per_dtype;
  std::vector<std::string> problems;
};

MathDeclaration read_declaration(std::string_view text) {
  MathDeclaration d;
  text = trim(text);
  if (text.empty()) return d;
  if (text.find(':') == std::string_view::npos) {
    d.every_dtype = std::string(text);
    return d;
  }
  while (!text.empty()) {
    const auto semi = text.find(';');
    const std::string_view entry = trim(text.substr(0, semi));
    text = semi == std::string_view::npos ? std::string_view() : text.substr(semi + 1);
    const auto colon = entry.find(':');
    if (colon == std::string_view::npos) {
      d.problems.push_back("entry \"" + std::string(entry) + "\" is not \"DTYPE: LABEL\"");
      continue;
    }
    const std::string_view dtype_text = trim(entry.substr(0, colon));
    const auto dtype = parse_dtype(dtype_text);
    if (!dtype) {
      d.problems.push_back("\"" + std::string(dtype_text) + "\" is not a dtype (fp32, fp16, bf16)");
      continue;
    }
    d.per_dtype.emplace_back(*dtype, std::string(trim(entry.substr(colon + 1))));
  }
  return d;
}

}  // namespace

bool is_math_label(std::string_view label) {
  return std::any_of(std::begin(kMathLabels), std::end(kMathLabels),
                     [&](const MathLabel& m) { return label == m.label; });
}

std::string default_math_label(std::string_view compute_unit, DType dtype) {
  auto tensor = [](DType d) {
    return d == DType::fp32 ? std::string("tf32") : std::string(to_string(d)) + ", fp32 acc";
  };
  if (compute_unit == "tensor") return tensor(dtype);
  if (compute_unit == "tensor_tf32") return tensor(DType::fp32);
  if (compute_unit == "tensor_bf16") return tensor(DType::bf16);
  if (compute_unit == "tensor_fp16") return tensor(DType::fp16);
  return std::string(compute_unit);  // "fp32", or a unit this table does not know yet
}

std::string math_label(const Op& op, const Variant& variant, DType dtype) {
  const MathDeclaration d = read_declaration(variant.math);
  if (d.every_dtype) return *d.every_dtype;
  for (const auto& [which, label] : d.per_dtype)
    if (which == dtype) return label;
  return default_math_label(op.compute_unit, dtype);
}

std::string math_summary(const Op& op, const Variant& variant) {
  auto runs = [&](DType dtype) {
    if (!variant.refuse) return true;
    for (const auto* shapes : {&op.default_shapes, &op.edge_shapes})
      for (const Shape& s : *shapes)
        if (!variant.refuse(s, dtype)) return true;
    return op.default_shapes.empty() && op.edge_shapes.empty();  // nothing to ask with: take it as run
  };
  std::vector<std::pair<DType, std::string>> labels;
  for (DType dtype : op.dtypes)
    if (runs(dtype)) labels.emplace_back(dtype, math_label(op, variant, dtype));
  if (labels.empty()) return {};
  const bool one = std::all_of(labels.begin(), labels.end(), [&](const auto& l) { return l.second == labels[0].second; });
  if (one) return labels[0].second;
  std::string out;
  for (const auto& [dtype, label] : labels)
    out += (out.empty() ? "" : "; ") + std::string(to_string(dtype)) + ": " + label;
  return out;
}

std::vector<std::string> math_declaration_problems(const Op& op, const Variant& variant) {
  const std::string where = "variant '" + variant.op + ":" + variant.name + "' .math \"" + variant.math + "\": ";
  const std::string how = "write one label for every dtype or \"DTYPE: LABEL\" entries separated by ';', "
                          "labels among " + known_labels() + " (harness/catalogue/math_label.hpp)";
  MathDeclaration d = read_declaration(variant.math);
  std::vector<std::string> out;
  for (const auto& p : d.problems) out.push_back(where + p + ": " + how);
  if (d.every_dtype && !is_math_label(*d.every_dtype))
    out.push_back(where + "\"" + *d.every_dtype + "\" is not a math label: " + how);
  std::vector<DType> seen;
  for (const auto& [dtype, label] : d.per_dtype) {
    const std::string name(to_string(dtype));
    if (!is_math_label(label)) out.push_back(where + "\"" + label + "\" (for " + name + ") is not a math label: " + how);
    if (std::find(op.dtypes.begin(), op.dtypes.end(), dtype) == op.dtypes.end())
      out.push_back(where + "op '" + op.name + "' has no dtype " + name + ": drop that entry");
    if (std::find(seen.begin(), seen.end(), dtype) != seen.end())
      out.push_back(where + name + " is named twice: keep one entry per dtype");
    seen.push_back(dtype);
  }
  return out;
}

std::string math_comparison(std::string_view variant_math, std::string_view baseline_math) {
  if (variant_math.empty() || baseline_math.empty() || variant_math == baseline_math) return {};
  return std::string(variant_math) + " vs " + std::string(baseline_math);
}

std::string uses_text(const std::vector<std::string>& uses) {
  std::string out;
  for (const auto& u : uses) out += (out.empty() ? "" : "+") + u;
  return out;
}

}  // namespace kwb
