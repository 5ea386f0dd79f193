// linear_bias_relu in fp64, shared by the op's oracle and its CPU tests: an nn.Linear layer
// followed by ReLU,
//
//   y[i, j] = max(0, sum_p x[i, p] W[j, p] + b[j])      x [m, k], W [n, k] (nn.Linear's [out, in]),
//                                                      b [n], y [m, n], all row-major
//
// The product goes through the threaded fp64 GEMM (reference/matmul_fp64.hpp).
#pragma once

#include <cstdint>

#include "harness/catalogue/types.hpp"

namespace kwb {

// The axes of a linear_bias_relu case, read once: const auto [m, n, k] = LinearAxes::of(a.shape).
struct LinearAxes {
  std::int64_t m = 0;  // tokens (rows of x and y)
  std::int64_t n = 0;  // out features (rows of W)
  std::int64_t k = 0;  // in features (the reduction)
  static LinearAxes of(const Shape& s) { return {s.at("m"), s.at("n"), s.at("k")}; }
};

inline Shape linear_shape(std::int64_t m, std::int64_t n, std::int64_t k) {
  return Shape{{{"m", m}, {"n", n}, {"k", k}}};
}

// With abs_sum and root_sum_sq (both or neither, m x n each): per output the magnitudes of the
// k + 1 terms it sums, x[i, p] W[j, p] and b[j] (what the op's error bound scales with).
void linear_bias_relu_fp64(std::int64_t m, std::int64_t n, std::int64_t k, const double* x, const double* w,
                           const double* b, double* y, double* abs_sum = nullptr, double* root_sum_sq = nullptr);

}  // namespace kwb
