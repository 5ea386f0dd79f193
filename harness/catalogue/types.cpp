// Names of the shared enums and the two printed forms of a shape.
#include "harness/catalogue/types.hpp"

#include <ostream>
#include <stdexcept>

namespace kwb {

std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::fp32: return "fp32";
    case DType::fp16: return "fp16";
    case DType::bf16: return "bf16";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view t) {
  if (t == "fp32" || t == "f32" || t == "float32" || t == "float") return DType::fp32;
  if (t == "fp16" || t == "f16" || t == "float16" || t == "half") return DType::fp16;
  if (t == "bf16" || t == "bfloat16") return DType::bf16;
  return std::nullopt;
}

std::size_t dtype_size(DType dtype) { return dtype == DType::fp32 ? 4 : 2; }

std::string_view to_string(Role role) {
  switch (role) {
    case Role::fused: return "fused";
    case Role::baseline: return "baseline";
    case Role::vendor: return "vendor";
  }
  return "?";
}

std::optional<Role> parse_role(std::string_view t) {
  if (t == "fused") return Role::fused;
  if (t == "baseline") return Role::baseline;
  if (t == "vendor") return Role::vendor;
  return std::nullopt;
}

std::string_view to_string(Mode mode) { return mode == Mode::cold ? "cold" : "hot"; }

std::optional<Mode> parse_mode(std::string_view t) {
  if (t == "cold") return Mode::cold;
  if (t == "hot") return Mode::hot;
  return std::nullopt;
}

std::string_view to_string(Disposition d) {
  switch (d) {
    case Disposition::passed: return "passed";
    case Disposition::failed: return "failed";
    case Disposition::skipped: return "skipped";
    case Disposition::not_verified: return "not_verified";
  }
  return "?";
}

std::optional<Disposition> parse_disposition(std::string_view t) {
  for (auto d : {Disposition::passed, Disposition::failed, Disposition::skipped,
                 Disposition::not_verified})
    if (to_string(d) == t) return d;
  return std::nullopt;
}

std::int64_t AxisValue::integer() const {
  if (const auto* v = std::get_if<std::int64_t>(&value_)) return *v;
  throw std::logic_error("axis value '" + choice() + "' is a choice, not an integer");
}

const std::string& AxisValue::choice() const {
  if (const auto* v = std::get_if<std::string>(&value_)) return *v;
  throw std::logic_error("axis value " + std::to_string(integer()) + " is an integer, not a choice");
}

std::string AxisValue::text() const { return is_choice() ? choice() : std::to_string(integer()); }

std::ostream& operator<<(std::ostream& out, const AxisValue& value) {
  return value.is_choice() ? out << '"' << value.choice() << '"' : out << value.integer();
}

const AxisValue* Shape::value(std::string_view name) const {
  for (const auto& [axis, value] : axes)
    if (axis == name) return &value;
  return nullptr;
}

std::optional<std::int64_t> Shape::find(std::string_view name) const {
  const AxisValue* v = value(name);
  if (!v) return std::nullopt;
  if (v->is_choice())
    throw std::logic_error("axis '" + std::string(name) + "' is a choice axis: read it with Shape::choice");
  return v->integer();
}

std::int64_t Shape::at(std::string_view name) const {
  if (auto v = find(name)) return *v;
  throw std::out_of_range("shape has no axis '" + std::string(name) + "'");
}

const std::string& Shape::choice(std::string_view name) const {
  const AxisValue* v = value(name);
  if (!v) throw std::out_of_range("shape has no axis '" + std::string(name) + "'");
  if (!v->is_choice())
    throw std::logic_error("axis '" + std::string(name) + "' is an integer axis: read it with Shape::at");
  return v->choice();
}

std::string Shape::to_assignments() const {
  std::string out;
  for (const auto& [axis, value] : axes) {
    if (!out.empty()) out += ',';
    out += axis + "=" + value.text();
  }
  return out;
}

std::string Shape::to_compact() const {
  std::string out;
  for (const auto& [axis, value] : axes) {
    if (value.is_choice()) continue;
    if (!out.empty()) out += 'x';
    out += value.text();
  }
  for (const auto& [axis, value] : axes)
    if (value.is_choice()) {
      if (!out.empty()) out += ',';
      out += axis;
      out += '=';
      out += value.choice();
    }
  return out;
}

std::string to_assignments(const TunableValues& tunables) {
  std::string out;
  for (const auto& [name, value] : tunables) {
    if (!out.empty()) out += ',';
    out += name + "=" + std::to_string(value);
  }
  return out;
}

}  // namespace kwb
