// Error-bound terms the GEMM ops share (linear_bias_relu, swiglu_mlp_fwd, linear_cross_entropy),
// on top of dot_product_bound() (harness/catalogue/tolerance.hpp: the output's rounding and the
// fp32 accumulation). Each output element is checked against the magnitudes of its own terms,
// A = sum |t_k| and R = sqrt(sum t_k^2), which the op's oracle returns.
//
// tf32: an op whose compute unit is "tensor" has a tf32 contract for fp32 cases (its variants may
// round both operands to tf32, 10 stored mantissa bits, unit roundoff u = 2^-11). Each product
// x w then carries a relative error d_x + d_w, |d| <= u, of random sign across the terms:
// term_rounding_scale(u, 2) R = 6.5 u R (8 sigma of the random sum; at k = 1 the exact worst case
// 2 u |x w| is below it). A kernel that truncated the operands instead (errors up to 2u toward
// zero) would have the same spread plus a bias of ~1.4 u |y|: inside the R term where |y| ~ R,
// but not granted as such (v4's wgmma path, which truncates, refuses fp32).
#pragma once

#include <cstdint>

#include "harness/catalogue/tolerance.hpp"

namespace kwb {

inline constexpr double kTf32UnitRoundoff = 0.00048828125;  // 2^-11

// root_sum_sq_scale of a product whose two operands the tensor cores round to tf32.
inline double tf32_operands_scale() { return term_rounding_scale(kTf32UnitRoundoff, 2); }

// A GEMM output of `dtype` summing `k` products in fp32, operands rounded to tf32 in fp32 cases.
inline Tolerance gemm_output_bound(DType dtype, std::int64_t k) {
  Tolerance t = dot_product_bound(elem_type_of(dtype), k);
  if (dtype == DType::fp32) t.root_sum_sq_scale += tf32_operands_scale();
  return t;
}

}  // namespace kwb
