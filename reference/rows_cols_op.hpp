// What the row-wise ops over one [rows, cols] case share (rmsnorm_fwd, softmax_fwd): the shape,
// the work model (each tensor moved once, a fixed FLOP count per element) and the validity rule.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/catalogue/registry.hpp"

namespace kwb {

// The axes of a [rows, cols] case, read once: auto [rows, cols] = RowsCols::of(a.shape).
struct RowsCols {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  static RowsCols of(const Shape& s) { return {s.at("rows"), s.at("cols")}; }
};

inline Shape rows_cols_shape(std::int64_t rows, std::int64_t cols) {
  return Shape{{{"rows", rows}, {"cols", cols}}};
}

// bytes: every tensor of `tensors` once, each at its own element size; flops: flops_per_element
// for each of the rows * cols elements.
inline std::function<WorkModel(const Shape&, DType)> rows_cols_work(
    std::function<std::vector<TensorSpec>(const Shape&, DType)> tensors, double flops_per_element) {
  return [tensors = std::move(tensors), flops_per_element](const Shape& s, DType dtype) {
    const double rows = static_cast<double>(s.at("rows"));
    const double cols = static_cast<double>(s.at("cols"));
    return WorkModel{tensor_bytes(tensors(s, dtype), dtype), flops_per_element * rows * cols};
  };
}

inline std::optional<std::string> invalid_rows_cols(const Shape& s) {
  if (s.at("rows") < 1 || s.at("cols") < 1) return "rows and cols must be at least 1";
  return std::nullopt;
}

}  // namespace kwb
