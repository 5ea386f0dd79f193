// newton_schulz: Muon's quintic Newton-Schulz orthogonalisation of a matrix G [rows, cols], five
// steps with (a, b, c) = (3.4445, -4.7750, 2.0315) (formulas in reference/newton_schulz.hpp).
//
// Napkin math (bf16, 4096 x 4096): with r = min(m, n), c = max(m, n), each step is three GEMMs,
// A = X X^T (2 r^2 c), A A (2 r^3), B X (2 r^2 c): 5 * 6 * 4096^3 = 2.06e12 FLOP, ~2.6 ms at
// ~790 TFLOP/s. Bytes the op must move: G in, X out (64 MB, ~21 us): it is matrix-bound by
// three orders of magnitude, hence compute_unit "tensor" (fp32 cases against the tf32 roof).
//
// Inputs: G ~ N(0, 1) (a gradient-like matrix; the normalisation makes its scale irrelevant).
// The output's elements have an RMS of ~0.9 / sqrt(max(m, n)): five steps push most singular
// values of X into ~[0.7, 1.2], and X has min(m, n) of them spread over m n elements.
//
// Verification: each step needs all of X, so nothing can be sampled: the oracle runs whole
// matrices through the threaded fp64 GEMM (reference/matmul_fp64.hpp). Its cost is the op's
// FLOPs in fp64: 3.2e10 at 1024^2, 2.6e11 at 2048^2, 7.7e11 at 2048 x 8192, 2.1e12 at 4096^2
// (the largest default: seconds to tens of seconds on 16 cores), 1.6e13 at 8192^2 (minutes: not
// a default; run it with --axis rows=8192 --axis cols=8192 when needed).
#include <algorithm>
#include <cmath>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/newton_schulz.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

Shape ns_shape(std::int64_t rows, std::int64_t cols) { return Shape{{{"rows", rows}, {"cols", cols}}}; }

// Tolerance of X, calibrated by simulation (tests/reference/newton_schulz_tolerance_test.cpp runs
// the five steps on the host with every stored intermediate rounded as a device rounds it, and
// checks that these numbers hold and that real bugs still fail). The error is not one GEMM's:
// each step re-rounds X, A and B and the iteration amplifies what it is fed (slope a = 3.4 at
// small singular values), so the per-element error is a fixed fraction of the output's RMS
// s = 1 / sqrt(max(m, n)) at every size (no sqrt(K) growth: the relative L2 error stays ~2.4e-2
// in bf16, ~3e-3 in fp16 and tf32 from 64^2 to 2048^2), with heavy tails: max |err| / s measured
// (the worse of the eager chain and the fused epilogues; square 64^2..1024^2 and 512 x 1024,
// 1024 x 512, 512 x 2048, worst at aspect ratio 4):
//   bf16 0.25, fp16 0.033, tf32 operands 0.030.
// atol = 3x that, times a slow growth for the tails of cases above 2^22 elements; rtol is the
// dtype's table entry. The base is reduction_tolerance() with K = max(m, n), the longest GEMM
// reduction (A = X X^T), scaled to outputs of size s: the table's floor and the fp32
// accumulation error, small beside the rest (bf16: +0.008 s). What a 3x margin
// still catches (max |err| / s at 256^2, same test): one step missing or extra (1.5, ~1% of the
// elements beyond 0.75 s), a and c swapped (1.9), b's sign lost (diverges), the output left
// transposed (O(1) on every element).
// Why no per-element error bound (the GEMM ops' sum |term| / sqrt(sum term^2), tolerance.hpp):
// the last step's own roundings are a small part of X's error; the rest is every earlier step's
// error carried through X = (a I + B) Y, dX ~ (a I + B) dY, which does not follow the last step's
// terms. Measured at 256^2 (bf16 and tf32, eager and fused): R = sqrt((a Y_ij)^2 + sum_k
// (B_ik Y_kj)^2) runs over 0.34 s .. 17 s while max |err| / R (0.16 bf16 eager) is about max
// |err| / s (0.13): a bound in R with the same margin would be ~0.4x the flat one at the smallest
// R and 15-20x looser at the largest, where a missing step (errors ~1.4 s) would pass. The flat
// atol in units of s, calibrated on the simulated devices, is the error bound here.
double simulated_error_over_scale(DType dtype) {
  switch (dtype) {
    case DType::bf16: return 0.25;
    case DType::fp16: return 0.035;
    case DType::fp32: return 0.032;  // tf32 operands, the fast variants' fp32 contract
  }
  return 0;
}

Tolerance newton_schulz_tolerance(DType dtype, std::int64_t m, std::int64_t n) {
  constexpr double kMargin = 3.0;
  const std::int64_t c = std::max(m, n);
  const double s = 1.0 / std::sqrt(static_cast<double>(c));
  // Tails: the maximum of N Gaussian-like errors grows as sqrt(log N); the simulation reaches
  // 2^22 elements.
  const double elements = std::max(2.0, static_cast<double>(m) * static_cast<double>(n));
  const double tails = std::max(1.0, std::sqrt(std::log2(elements) / 22.0));
  // reduction_tolerance() is written for outputs of size ~1: its absolute part (the table's
  // plus the fp32 accumulation over K) scales with the output, here s.
  Tolerance t = reduction_tolerance(elem_type_of(dtype), c, ElemType::fp32, 1.0);
  t.atol = s * (t.atol + kMargin * simulated_error_over_scale(dtype) * tails);
  return t;
}

std::vector<TensorSpec> ns_tensors(const Shape& s, DType dtype) {
  const auto [m, n] = RowsCols::of(s);
  return {
      {.name = "G", .dims = {m, n}, .init = Distribution::normal(0.0, 1.0)},
      {.name = "X", .dims = {m, n}, .is_output = true, .tolerance = newton_schulz_tolerance(dtype, m, n)},
  };
}

WorkModel ns_work(const Shape& s, DType dtype) {
  const auto [rows, cols] = RowsCols::of(s);
  return {tensor_bytes(ns_tensors(s, dtype), dtype), newton_schulz_flops(rows, cols)};
}

}  // namespace

// FLOPs: the three GEMMs of each step (2 per multiply-add, the full products as written: the
// symmetry of A and B is a variant's saving, not the op's, declared as its executed work), the
// scalar updates (b A + c A A: 3 per element of A; a X + B X: 2 per element of X), and the
// normalisation (2 per element for the sum of squares, 1 for the scale). With r1 = 0 the
// symmetric count below is exactly this one (a test holds them together).
double newton_schulz_flops(std::int64_t m, std::int64_t n) { return newton_schulz_symmetric_halves_flops(m, n, 0); }

// Per step, with r2 = r - r1: the Gram blocks [A11 A12] = Y1 Y^T (2 r1 r c) and A22 = Y2 Y2^T
// (2 r2^2 c); the polynomial blocks [B11 B12] = c A[0:r1, :] A + b A[0:r1, :] (2 r1 r^2, and
// 3 per element of the r1 r block for the epilogue) and B22 (2 r2^2 r, 3 per element of r2^2);
// the update a Y + B Y whole (2 r^2 c + 2 r c). r1 = 0 leaves r2 = r: the full products. At a
// square 4096 split 2048 + 2048 this is 5 r^3 a step against the full 6 r^3: 83.3%.
double newton_schulz_symmetric_halves_flops(std::int64_t rows, std::int64_t cols, std::int64_t split) {
  const double m = static_cast<double>(rows), n = static_cast<double>(cols);
  const double r = std::min(m, n), c = std::max(m, n);
  const double r1 = static_cast<double>(split), r2 = r - r1;
  const double gram = 2 * r1 * r * c + 2 * r2 * r2 * c;
  const double poly = 2 * r1 * r * r + 2 * r2 * r2 * r + 3 * (r1 * r + r2 * r2);
  const double update = 2 * r * r * c + 2 * r * c;
  return kNsSteps * (gram + poly + update) + 3 * m * n;
}

namespace {

void ns_oracle(const Shape& s, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const auto [m, n] = RowsCols::of(s);
  newton_schulz_fp64(in[0].values.data(), m, n, out[0].values.data());
}

std::optional<std::string> ns_invalid(const Shape& s) {
  return invalid_rows_cols(s);
}

// Muon's matrices: square hidden-size weights (1024..4096), MLP weights 4x wider or taller (the
// tall one takes the transposed path), and a 2048 x 8192 MLP weight. 8192^2 is allowed but its
// oracle costs minutes (see above).
std::vector<Shape> ns_default_shapes() {
  return {ns_shape(1024, 1024), ns_shape(2048, 2048), ns_shape(4096, 4096),
          ns_shape(1024, 4096), ns_shape(4096, 1024), ns_shape(2048, 8192)};
}

// Both paths (wide and tall), a single element, vectors, sizes that are no multiple of a GEMM
// tile or of 8 elements (16-byte rows), one past a 128 tile, a square one past 256 (a Gram
// matrix split 256 + 1 by the symmetric variant), and 300 x 700 both ways (split 256 + 44).
std::vector<Shape> ns_edge_shapes() {
  return {ns_shape(1, 1),     ns_shape(1, 8),     ns_shape(7, 1),     ns_shape(3, 5),
          ns_shape(5, 3),     ns_shape(16, 16),   ns_shape(33, 65),   ns_shape(65, 33),
          ns_shape(127, 129), ns_shape(129, 256), ns_shape(256, 129), ns_shape(257, 257),
          ns_shape(300, 700), ns_shape(700, 300)};
}

KWB_REGISTER_OP(Op{
    .name = "newton_schulz",
    .description = "Muon's Newton-Schulz orthogonalisation: X = G / (||G||_F + 1e-7), transposed if rows > cols; "
                   "5 times A = X X^T, B = b A + c A A, X = a X + B X with (a, b, c) = (3.4445, -4.7750, 2.0315)",
    .axes = {{"rows", 4096, {}, "rows m of G"}, {"cols", 4096, {}, "cols n of G"}},
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = ns_tensors,
    .work = ns_work,
    .oracle = ns_oracle,
    .sample_axis = "",
    .compute_unit = "tensor",
    .default_shapes = ns_default_shapes(),
    .edge_shapes = ns_edge_shapes(),
    .invalid = ns_invalid,
});

}  // namespace
}  // namespace kwb
