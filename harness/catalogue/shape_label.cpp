// The readable form of a shape (rules in shape_label.hpp).
#include "harness/catalogue/shape_label.hpp"

#include <algorithm>

namespace kwb {

bool any_labelled(const std::vector<AxisSpec>& axes) {
  return std::any_of(axes.begin(), axes.end(), [](const AxisSpec& a) { return !a.label.empty(); });
}

namespace {

// The axis's token, or empty when the axis is left out.
std::string token(const AxisSpec& spec, const AxisValue& value) {
  if (!value.is_choice()) {
    if (value.integer() == 0 && spec.default_value == 0) return {};
    return spec.label + value.text();
  }
  if (!spec.choices.empty() && value.choice() == spec.choices.front()) return {};
  if (spec.is_flag()) return spec.label;
  return spec.label + value.choice();
}

}  // namespace

std::string shape_label(const Shape& shape, const std::vector<AxisSpec>& axes) {
  if (!any_labelled(axes) || shape.axes.size() != axes.size()) return shape.to_compact();
  std::string out;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const auto& [name, value] = shape.axes[i];
    if (name != axes[i].name || value.is_choice() != axes[i].is_choice()) return shape.to_compact();
    const std::string t = token(axes[i], value);
    if (t.empty()) continue;
    if (!out.empty() && t.front() != '/') out += ' ';
    out += t;
  }
  return out.empty() ? shape.to_compact() : out;
}

std::string recorded_shape_label(std::string_view op, const Shape& shape) {
  const Op* known = Registry::instance().find_op(op);
  if (!known || !any_labelled(known->axes)) return {};
  const std::string label = shape_label(shape, known->axes);
  return label == shape.to_compact() ? std::string() : label;
}

std::string shape_label(std::string_view op, const Shape& shape) {
  const Op* known = Registry::instance().find_op(op);
  return known ? shape_label(shape, known->axes) : shape.to_compact();
}

}  // namespace kwb
