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

// ---- Error bounds of sums whose terms the oracle reports: attention, the mHC maps, QK-norm ----
// (Tolerance::abs_sum_scale and ::root_sum_sq_scale; the oracle fills A = sum |term| and
// R = sqrt(sum term^2) per element, HostTensor::abs_sum and ::root_sum_sq.)
//
// Rounded terms (R). Rounding to nearest in a format of unit roundoff u leaves a relative error
// of up to u; over mantissas spread log-uniformly in [1, 2) (products, exponentials, dots) its
// standard deviation is u sqrt(E[1/m^2] / 3) = 0.425 u. Independent roundings of the terms t_k of
// a sum then add up like a Gaussian of sigma 0.425 u R, and 3 u R is 7 sigma: P(|Z| > 7) = 3e-12,
// no false failure over the ~1e9 elements a full sweep checks (6 sigma would give ~1). When one
// term dominates, its single rounding is at most u |t| <= u R: the 3 u R bound then holds outright.
inline constexpr double kRoundedTermsSafety = 3.0;
inline double rounded_terms_scale(ElemType rounded_to) { return kRoundedTermsSafety * unit_roundoff(rounded_to); }

// fp32 accumulation (A). Each fp32 add rounds its partial sum, |partial| <= A, by at most u32
// relative (a tensor core's fp32 accumulate may truncate: 2 u32, and the errors then share a
// sign), so `roundings` adds move the result by at most roundings * u32 * A (first order): a hard
// bound, as the sign cannot be counted on to average out. Pass the longest chain of adds one
// output sees (K for a sequential CUDA-core sum, 2 ceil(K / 16) for m16n8k16 MMAs over K, plus
// any rescaling multiplies); the +2 covers a final scale and store.
inline double fp32_roundings_scale(double roundings) { return unit_roundoff(ElemType::fp32) * (roundings + 2); }

// An output's own roundings to its type (rtol): each moves it by at most u relative, and real
// kernels reach that (a value just above a power of two rounds by almost u), so a bound of
// exactly `roundings` u would leave some element at ~1x it; the margin 1.25 keeps such an element
// at <= 0.8 of its bound. `roundings`: 1 for an fp32 result stored once, 2 where an implementation
// stores an intermediate in the output's type first (x * r cast, then * w).
inline constexpr double kRoundingMargin = 1.25;
inline double rounding_rtol(ElemType out, int roundings = 1) {
  return kRoundingMargin * roundings * unit_roundoff(out);
}

// Half the smallest subnormal step of a floating type: the absolute error of rounding a value
// below its normal range (fp16 2^-25 ~ 3e-8: softmax weights under 6e-5 lose their relative
// precision in fp16; bf16 and fp32 share fp32's range, 2^-134 and 2^-150).
inline double subnormal_rounding(ElemType type) {
  switch (type) {
    case ElemType::fp16: return std::ldexp(1.0, -25);
    case ElemType::bf16: return std::ldexp(1.0, -134);
    case ElemType::fp32: return std::ldexp(1.0, -150);
    default: return 0;
  }
}
// ---- end of the error bounds of attention, mHC and QK-norm ----

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
