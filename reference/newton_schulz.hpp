// The Newton-Schulz quintic iteration Muon uses to orthogonalise an update (Keller Jordan's
// zeropower_via_newtonschulz5), in fp64, shared by the oracle of newton_schulz and its CPU tests,
// plus an emulation of the same iteration with every stored intermediate rounded the way a
// device variant rounds it: what the op's tolerances are calibrated on.
//
// G [m, n]:
//   X = G / (||G||_F + 1e-7)
//   if m > n: X = X^T                (the Gram matrix A is then min(m, n) square)
//   5 times:  A = X X^T
//             B = b A + c A A
//             X = a X + B X          (a, b, c) = (3.4445, -4.7750, 2.0315)
//   if m > n: X = X^T
// Each step applies p(s) = a s + b s^3 + c s^5 to every singular value s of X (the singular
// vectors stay): the normalisation puts s in (0, 1], and five steps push s into ~[0.7, 1.2].
#pragma once

#include <cstdint>
#include <vector>

namespace kwb {

inline constexpr int kNsSteps = 5;
inline constexpr double kNsA = 3.4445, kNsB = -4.7750, kNsC = 2.0315;
inline constexpr double kNsEps = 1e-7;

// The scalar map one step applies to each singular value.
inline double ns_poly(double s, double a = kNsA, double b = kNsB, double c = kNsC) {
  const double s2 = s * s;
  return s * (a + s2 * (b + c * s2));
}

// The iteration's knobs: Muon's by default; the tests change them to show that the op's
// tolerance rejects a wrong coefficient, a missing step or a missing transpose.
struct NsParams {
  int steps = kNsSteps;
  double a = kNsA, b = kNsB, c = kNsC;
  bool transpose_tall = true;  // work on X^T when m > n
};

// How intermediates are stored, for the emulation of a device variant.
enum class NsPrecision {
  fp64,         // the oracle: nothing rounded
  fp32,         // every stored matrix in fp32, GEMM operands in full fp32 (the fp32 baseline)
  tf32,         // stored in fp32, GEMM operands rounded to tf32 (10-bit mantissa)
  fp16,         // every stored matrix (and the eager chain's norm) in fp16
  bf16,         // every stored matrix (and the eager chain's norm) in bf16
};

// Which chain of roundings: eager rounds each framework op's output (the norm, b A, c A A, their
// sum, a X, B X, their sum); fused rounds only each GEMM's output (B = c A A + b A and
// X = B X + a X in the epilogue) and X0 = G / norm.
enum class NsChain { eager, fused };

// out [m, n] from g [m, n] (row-major), in fp64.
void newton_schulz_fp64(const double* g, std::int64_t m, std::int64_t n, double* out, const NsParams& p = {});

// The same with intermediates rounded as `precision` and `chain` say; the GEMMs themselves are
// exact (fp64) on the rounded operands: a device's fp32 accumulation error is far below one
// rounding of its output to bf16, fp16 or tf32 inputs, and comparable to the fp32 storage here.
void newton_schulz_emulated(const double* g, std::int64_t m, std::int64_t n, double* out, NsPrecision precision,
                            NsChain chain);

// Round a value as one stored element of `precision` (fp64: unchanged; tf32: fp32 storage).
double ns_store(double v, NsPrecision precision);

// FLOPs of the op at G [m, n] (its work model's): the normalisation and five steps of three full
// GEMMs with their scalar updates (reference/newton_schulz.cpp says what each term counts).
double newton_schulz_flops(std::int64_t m, std::int64_t n);
// FLOPs executed by a variant that computes the symmetric A = Y Y^T and B = b A + c A A by blocks
// of the split r = r1 + r2 (r = min(m, n)): [A11 A12] (r1 x r) and A22 (r2 x r2) of each, the
// lower-left block mirrored (no arithmetic); the update B Y stays whole. r1 = 0: the full count.
double newton_schulz_symmetric_halves_flops(std::int64_t m, std::int64_t n, std::int64_t r1);

}  // namespace kwb
