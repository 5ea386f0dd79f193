// Tolerance terms the GEMM ops share (linear_bias_relu, swiglu_mlp_fwd), on top of
// reduction_tolerance (harness/catalogue/tolerance.hpp), which covers the fp32 accumulation of K terms.
//
// tf32: an op whose compute unit is "tensor" has a tf32 contract for fp32 cases (its variants may
// round both operands to tf32, 10 stored mantissa bits, unit roundoff u = 2^-11). Each product
// x w then carries a relative error of up to ~2u, of random sign for random inputs, so the sum's
// error is a random walk of K steps of size ~2u |x w|: about 2u * term_scale * sqrt(K), absolute
// (it does not shrink with the output). With reduction_tolerance's safety factor 4:
//   atol += 4 * 2u * term_scale * sqrt(K)             (fp32 cases only)
//
// A stored intermediate: an implementation that rounds an O(magnitude) intermediate to the case
// dtype before the last step (a baseline's GEMM output, the gate and up of a SwiGLU) adds an
// error of up to u_dtype * magnitude that does not scale with the final value (it survives a
// cancellation, e.g. x W^T + b near 0):
//   atol += u_dtype * magnitude
#pragma once

#include <cmath>
#include <cstdint>

#include "harness/catalogue/tolerance.hpp"

namespace kwb {

inline constexpr double kTf32UnitRoundoff = 0.00048828125;  // 2^-11

inline double tf32_operand_atol(std::int64_t k, double term_scale) {
  return 4.0 * 2.0 * kTf32UnitRoundoff * term_scale * std::sqrt(static_cast<double>(k < 1 ? 1 : k));
}

inline double stored_intermediate_atol(DType dtype, double magnitude) {
  return unit_roundoff(elem_type_of(dtype)) * magnitude;
}

}  // namespace kwb
