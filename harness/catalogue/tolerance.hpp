// Tolerances: |got - ref| <= atol + rtol * |ref| against an fp64 oracle, per output tensor.
//
// The default table, per element type: the relative parts are a few units in the last place
// of each format (fp32 2^-23, fp16 2^-10, bf16 2^-7 mantissa steps) to leave room for one or
// two roundings of an fp32 intermediate; the absolute parts cover outputs near zero. Integer
// and bool outputs are compared exactly.
//
// Reductions: an output that sums K terms accumulates K roundings. With unit roundoff u of the
// accumulation precision (fp32 2^-24, fp16 2^-11, bf16 2^-8) and rounding errors of random
// sign, the error of a sum grows like a random walk:
//   - terms of one sign: |S| ~ K s and the error ~ u s sqrt(sum k^2) ~ u |S| sqrt(K / 3),
//     so the relative part grows as sqrt(K) u;
//   - zero-mean terms (|S| ~ s sqrt(K), possibly near 0): the partial sums are ~ s sqrt(k),
//     and the error ~ u s sqrt(sum k) ~ u s K / sqrt(2), which the absolute part must cover.
// reduction_tolerance() adds both, with a safety factor c = 4, to the output format's default:
//   rtol = base.rtol + c * sqrt(K) * u
//   atol = base.atol + c * K * u * term_scale        (term_scale: typical |term|, e.g. 1)
// A GEMM's output is a reduction over K; a weight gradient's over the rows it sums.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "harness/catalogue/registry.hpp"

namespace kwb {

inline Tolerance default_tolerance(DType dtype) {
  switch (dtype) {
    case DType::fp32: return {1e-5, 1e-5};
    case DType::fp16: return {1e-3, 2e-3};
    case DType::bf16: return {8e-3, 1.6e-2};
  }
  return {};
}

// The table for any concrete element type: exact for integers and bools.
inline Tolerance default_tolerance(ElemType type) {
  switch (type) {
    case ElemType::fp32: return default_tolerance(DType::fp32);
    case ElemType::fp16: return default_tolerance(DType::fp16);
    case ElemType::bf16: return default_tolerance(DType::bf16);
    default: return {0, 0};
  }
}

// Unit roundoff (half a unit in the last place at 1) of a floating element type.
inline double unit_roundoff(ElemType type) {
  switch (type) {
    case ElemType::fp32: return std::ldexp(1.0, -24);
    case ElemType::fp16: return std::ldexp(1.0, -11);
    case ElemType::bf16: return std::ldexp(1.0, -8);
    default: return 0;
  }
}

// Tolerance of an output of type `out` that sums `reduction_length` terms of typical magnitude
// `term_scale`, accumulated in `accumulate` (fp32 unless the kernel is allowed to accumulate
// in a narrower type). See the formula above.
inline Tolerance reduction_tolerance(ElemType out, std::int64_t reduction_length,
                                     ElemType accumulate = ElemType::fp32, double term_scale = 1.0) {
  constexpr double kSafety = 4.0;
  const double k = static_cast<double>(reduction_length < 1 ? 1 : reduction_length);
  const double u = unit_roundoff(accumulate);
  const Tolerance base = default_tolerance(out);
  return {base.atol + kSafety * k * u * term_scale, base.rtol + kSafety * std::sqrt(k) * u};
}

// ---- Error bounds of sums of products (the GEMM ops) -------------------------------------------
// An output y = sum_k t_k (a dot product, plus an epilogue) is checked per element against
//   rtol |ref| + abs_sum_scale * A + root_sum_sq_scale * R,  A = sum |t_k|, R = sqrt(sum t_k^2),
// the magnitudes the oracle returns for that element. The inputs are already in their element
// types, so only the kernel's own roundings count:
//  - Independent roundings of each term (a tf32 operand, a factor stored in bf16 before the
//    GEMM): term k carries a relative error d_k, |d_k| <= u per rounding, of random sign across k.
//    The sum's error is then ~Gaussian with std <= u sqrt(roundings / 3) R (uniform d_k). The
//    bound takes kBoundSigmas = 8 of that (the largest of a case's ~10^6 errors sits near 5
//    sigma, ~0.6 of the bound; an 8-sigma tail, ~1e-15 an element, never shows in a sweep), and
//    never less than one term's worst case (roundings u R at k = 1): term_rounding_scale().
//  - fp32 accumulation of k terms: each addition errs by up to u |partial sum| <= u A. With errors
//    of random sign the total stays below ~sqrt(k) u A (Higham and Mary's probabilistic bound,
//    whatever the terms' signs); tensor cores may truncate the bits an addition drops (up to a
//    whole ulp, 2u, toward zero) rather than round them, hence 2 u sqrt(k) A:
//    fp32_accumulation_scale(). Random-sign terms make far less (~0.6 u A). Truncation drifts one
//    way once a large term sits in the sum (~k u |y| after it), which is ~1e-4 |y| at k = 2000:
//    the other terms cover it (the GEMM ops' bound tests simulate truncating adds).
//  - Roundings of the output and of intermediates that stay relative to it go to rtol, doubled: a
//    rounding to nearest reaches its whole u just above a power of two, and among a million
//    outputs some do, so a bound of exactly u |y| would leave no margin there.
inline constexpr double kBoundSigmas = 8.0;

inline double term_rounding_scale(double unit_roundoff_per_rounding, double roundings_per_term) {
  const double u = unit_roundoff_per_rounding;
  return std::max(kBoundSigmas * u * std::sqrt(roundings_per_term / 3.0), roundings_per_term * u);
}

inline double fp32_accumulation_scale(std::int64_t reduction_length) {
  const double k = static_cast<double>(reduction_length < 1 ? 1 : reduction_length);
  return 2.0 * unit_roundoff(ElemType::fp32) * std::sqrt(k);
}

// The bound of a dot product accumulated in fp32 over `reduction_length` terms and rounded once
// to `out`; an op adds its own roundings (tf32 operands, stored intermediates) on top.
inline Tolerance dot_product_bound(ElemType out, std::int64_t reduction_length) {
  Tolerance t;
  t.rtol = 2.0 * unit_roundoff(out);
  t.abs_sum_scale = fp32_accumulation_scale(reduction_length);
  return t;
}
// ---- end of the sums-of-products bounds --------------------------------------------------------

// The tolerance an output is checked with: the op's own for this shape, else the table's.
inline Tolerance tolerance_for(const TensorSpec& output, DType case_dtype) {
  return output.tolerance ? *output.tolerance : default_tolerance(output.elem_type(case_dtype));
}

}  // namespace kwb
