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

// ---- Error bounds of fp32 arithmetic (norms, softmax, cross-entropy, rope, swiglu) -------------
//
// An output computed in fp32 from inputs the oracle sees exactly (already rounded to their
// element types), then rounded once to its own type, is off by
//   |err| <= atol + 2 u_out |ref| + c u32 A[i] + c_s u_s R[i]
//   - u_out |ref|: the last rounding, to the output type (fp32 outputs: u32). A correctly
//     rounded result can use all of it, so rtol is 2 u_out: the last rounding then sits at half
//     its share at worst, the margin the other terms have (c);
//   - c u32 A[i]: the fp32 roundings inside. The oracle gives A[i] as the magnitudes of the terms
//     that make element i, each counted as often as its rounding errors can reach the result
//     (the op's comment says how: a term inside a K-long fp32 row sum counts sqrt(K) times, the
//     random-walk growth of the sum's error); c = kFp32BoundSafety;
//   - c_s u_s R[i]: terms that an implementation rounds to the storage type before it sums them
//     (an eager baseline's bf16 intermediate); independent errors of random sign, so the
//     root-sum-square of the terms. 0 where no variant rounds an intermediate, and in fp32 cases
//     (those roundings are fp32's, inside A);
//   - atol: what the output type cannot hold relatively: fp16's subnormal spacing 2^-24 below
//     2^-14; fp32 and bf16 share fp32's range, so only values flushed below 2^-126.
// c = 8: the row statistics' own roundings (rsqrtf is 2 ulp = 4 u32 off at most, the fp32 sums
// of a row a few u32 more) reach every element through a term of A, so a kernel can spend about
// half of c on them in the worst case; the CPU simulations of the kernels
// (tests/reference/*_bounds_test.cpp, intrinsics at their documented worst error) stay under
// 0.3 of the bound in fp32 at every edge shape, and near 0.5 in bf16/fp16, the store's share.
inline constexpr double kFp32BoundSafety = 8.0;
inline constexpr double kStorageBoundSafety = 6.0;  // ~6 sigma on R: millions of elements per case

// The size of one rounding of v to a 16-bit storage type, in units of that type's u: |v|, but
// never below fp16's smallest normal 2^-14, under which fp16's spacing stops shrinking (bf16's
// own floor is fp32's: taking fp16's for both loosens only values under 6e-5, by u 2^-14).
inline double stored_magnitude(double v) { return std::fmax(std::fabs(v), 6.103515625e-05); }

inline double subnormal_floor(ElemType out) {
  return out == ElemType::fp16 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -126);
}

// The bound above for an output of type `out`; `rounds_to_storage`: some variant rounds the
// terms of R to `storage` (the case dtype) before summing them.
inline Tolerance fp32_error_bound(ElemType out, bool rounds_to_storage = false,
                                  ElemType storage = ElemType::fp32) {
  Tolerance t;
  t.atol = subnormal_floor(out);
  t.rtol = 2 * unit_roundoff(out);
  t.abs_sum_scale = kFp32BoundSafety * unit_roundoff(ElemType::fp32);
  if (rounds_to_storage && storage != ElemType::fp32)
    t.root_sum_sq_scale = kStorageBoundSafety * unit_roundoff(storage);
  return t;
}

// A weight gradient summed over rows in fp32 (dweight, dbias): the sum's roundings scale with
// A = sum |term| (random signs: about u32 A for a sequential sum, far less for the kernels'
// blocked partials), and each term's error from its own row's statistics with R, the
// root-sum-square of those per-term errors in units of u32 (the op's comment gives them).
inline Tolerance fp32_row_sum_error_bound(bool per_term_errors = true) {
  Tolerance t = fp32_error_bound(ElemType::fp32);
  if (per_term_errors) t.root_sum_sq_scale = kFp32BoundSafety * unit_roundoff(ElemType::fp32);
  return t;
}

// The tolerance an output is checked with: the op's own for this shape, else the table's.
inline Tolerance tolerance_for(const TensorSpec& output, DType case_dtype) {
  return output.tolerance ? *output.tolerance : default_tolerance(output.elem_type(case_dtype));
}

}  // namespace kwb
