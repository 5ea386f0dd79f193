// The process-wide catalogue that static registrars fill before main().
#include "catalogue/registry.hpp"

#include <stdexcept>

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
  }
  return "?";
}

Registry& Registry::instance() {
  static Registry registry;  // constructed on first use: safe from any static initialiser
  return registry;
}

void Registry::add(Op op) {
  if (find_op(op.name)) throw std::logic_error("op registered twice: " + op.name);
  (op.test_only ? test_ops_ : ops_).push_back(std::move(op));
}

void Registry::add(Variant variant) {
  if (find_variant(variant.op, variant.name))
    throw std::logic_error("variant registered twice: " + variant.op + ":" + variant.name);
  variants_.push_back(std::move(variant));
}

const Op* Registry::find_op(std::string_view name) const {
  for (const auto* list : {&ops_, &test_ops_})
    for (const auto& op : *list)
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

std::vector<std::string> Registry::op_names() const {
  std::vector<std::string> out;
  for (const auto& op : ops_) out.push_back(op.name);
  return out;
}

std::vector<std::string> Registry::variant_names(bool include_test_only) const {
  std::vector<std::string> out;
  for (const auto& v : variants_)
    if (include_test_only || !v.test_only) out.push_back(v.name);
  return out;
}

}  // namespace kwb
