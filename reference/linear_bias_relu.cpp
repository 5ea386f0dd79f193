// linear_bias_relu: y = ReLU(x W^T + b), one nn.Linear layer of an MLP and its activation.
// Axes m (tokens), n (out features), k (in features); x [m, k], W [n, k], b [n], y [m, n], all in
// the case dtype (fp32, fp16, bf16).
//
// Napkin math: 2 m n k FLOPs (the bias and ReLU are O(m n), not counted); bytes x, W, b, y once.
// At 8192^3 in bf16: 1.10 TFLOP and 403 MB, ~1.4 ms at 790 TFLOP/s, 2700 FLOP per byte: deep in
// compute-bound land, so the roof is the tensor cores of the case dtype (fp32 cases: tf32).
//
// Inputs: x ~ N(0, 1) (activations of unit scale), W ~ N(0, 1/sqrt(k)) (nn.Linear-like fan-in
// scaling, so x W^T ~ N(0, 1) at every k), b ~ N(0, 0.5) (about a third of the outputs clipped by
// the ReLU, and bias-dominated outputs near the clipping point).
//
// Tolerance: an error bound per element (reference/gemm_tolerance.hpp). The oracle returns, for
// y[i, j], the magnitudes of its k + 1 terms x[i, p] W[j, p] and b[j]: A = sum |.|, R = sqrt(sum .^2)
// (R ~ 1.1 at any k with these inputs). The kernels' roundings:
//  - fp32 accumulation of k products (abs_sum_scale 2 u32 sqrt(k)), then + b in fp32 and ReLU;
//  - the output's rounding to the dtype: u_out |y|;
//  - fp32 cases: tf32 operands in the tensor-core variants (6.5 u_tf32 R, 8 sigma; at k = 1 the
//    output is relu(x w + b) with the product's error up to 2 u_tf32 |x w| <= 2 u_tf32 R);
//  - the baseline stores z = x W^T in the dtype before adding b (bf16/fp16; fp32: u32): an error
//    u_out |z| that survives the cancellation of z + b. With y > 0, |z| <= |y| + |b| and |b| <= R;
//    a clipped output is 0 unless z + b > -u_out |z|, i.e. |z| ~ |b|. Hence rtol += u_out and
//    root_sum_sq_scale += u_out, each doubled (harness/catalogue/tolerance.hpp says why).
// Outputs near 0 are checked at ~2 u_out R (+ 6.5 u_tf32 R in fp32): 0.009 in bf16 (the old flat
// atol was 0.024) and 0.003 in fp32, where the old flat 0.004 did not follow |x w|: at k = 1 the tf32 product's
// error reached 0.02 (|x w| ~ 20 in the tails of a million outputs) and failed fused_v3's tf32 case.
#include "reference/linear_bias_relu.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/gemm_tolerance.hpp"
#include "reference/matmul_fp64.hpp"

namespace kwb {

void linear_bias_relu_fp64(std::int64_t m, std::int64_t n, std::int64_t k, const double* x, const double* w,
                           const double* b, double* y, double* abs_sum, double* root_sum_sq) {
  // y = x (m x k, ld k) * W^T (W stored n x k, ld k), then bias and ReLU row by row.
  const bool magnitudes = abs_sum != nullptr && root_sum_sq != nullptr;
  if (magnitudes)
    ref::matmul_fp64(m, n, k, {x, k, false}, {w, k, true}, y, n, 0.0, {abs_sum, root_sum_sq});
  else
    ref::matmul_fp64(m, n, k, {x, k, false}, {w, k, true}, y, n);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t e = i * n + j;
      y[e] = std::max(0.0, y[e] + b[j]);
      if (!magnitudes) continue;
      abs_sum[e] += std::fabs(b[j]);
      root_sum_sq[e] = std::sqrt(root_sum_sq[e] + b[j] * b[j]);
    }
}

namespace {

// The derivation is in the header comment above.
Tolerance output_tolerance(const Shape& s, DType dtype) {
  Tolerance t = gemm_output_bound(dtype, LinearAxes::of(s).k);
  const double u_out = unit_roundoff(elem_type_of(dtype));
  // The baseline's stored x W^T, doubled as the output's own rounding is; the fp32 + b.
  t.rtol += 2.0 * u_out + unit_roundoff(ElemType::fp32);
  t.root_sum_sq_scale += 2.0 * u_out;  // the same rounding where z + b cancels: u_out |b|
  return t;
}

std::vector<TensorSpec> tensors(const Shape& s, DType dtype) {
  const auto [m, n, k] = LinearAxes::of(s);
  const double w_std = 1.0 / std::sqrt(static_cast<double>(k));
  return {
      {.name = "x", .dims = {m, k}, .sample_dim = 0, .init = Distribution::normal(0.0, 1.0)},
      {.name = "W", .dims = {n, k}, .init = Distribution::normal(0.0, w_std)},
      {.name = "b", .dims = {n}, .init = Distribution::normal(0.0, 0.5)},
      {.name = "y", .dims = {m, n}, .is_output = true, .sample_dim = 0, .tolerance = output_tolerance(s, dtype)},
  };
}

void oracle(const Shape& s, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const auto [m, n, k] = LinearAxes::of(s);
  HostTensor& y = out[0];
  y.abs_sum.resize(y.values.size());
  y.root_sum_sq.resize(y.values.size());
  linear_bias_relu_fp64(m, n, k, in[0].values.data(), in[1].values.data(), in[2].values.data(), y.values.data(),
                        y.abs_sum.data(), y.root_sum_sq.data());
}

// Small, medium and large MLP layers: a 4096-wide model's projections at 2048 and 4096 tokens,
// 8192^3 (the v4 target), 16384 tokens of an 8192-wide layer (the largest: W 128 MB and x 256 MB
// in bf16), and LLaMA-3-8B's up (4096 -> 14336) and down (14336 -> 4096) projections.
std::vector<Shape> default_shapes() {
  return {linear_shape(2048, 4096, 4096),  linear_shape(4096, 4096, 4096),  linear_shape(8192, 8192, 8192),
          linear_shape(16384, 8192, 8192), linear_shape(8192, 14336, 4096), linear_shape(8192, 4096, 14336)};
}

// Odd sizes on every axis: 1, 3, 7, primes, 65 and 129 (one past a 64- and a 128-wide tile),
// k below one K tile (5, 8), k not a multiple of 8 (no 16-byte loads: 33, 127), one token of a
// 4096-wide layer (a decode step), 257 x 129 x 264 (one past in m and n, k a multiple of 8), and
// k = 1 over a million outputs: y = relu(x w + b) with a heavy-tailed product (|x w| ~ 20 at the
// tails), where tf32's relative operand error is largest in absolute terms.
std::vector<Shape> edge_shapes() {
  return {linear_shape(1, 1, 1),       linear_shape(3, 7, 5),      linear_shape(7, 3, 65),
          linear_shape(65, 127, 33),   linear_shape(127, 65, 129), linear_shape(129, 129, 136),
          linear_shape(131, 257, 127), linear_shape(256, 256, 8),  linear_shape(257, 129, 264),
          linear_shape(1, 4096, 4096), linear_shape(1024, 1024, 1)};
}

KWB_REGISTER_OP(Op{
    .name = "linear_bias_relu",
    .description = "nn.Linear + ReLU: y = max(0, x W^T + b), x [m, k], W [n, k], b [n], y [m, n]",
    .axes = {{"m", 8192, {}, "tokens (rows of x and y)", {}, "m"},
             {"n", 8192, {}, "out features (rows of W)", {}, "n"},
             {"k", 8192, {}, "in features (the reduction)", {}, "k"}},
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = tensors,
    .work = [](const Shape& s, DType dtype) {
      const auto [m, n, k] = LinearAxes::of(s);
      return WorkModel{tensor_bytes(tensors(s, dtype), dtype),
                       2 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k)};
    },
    .oracle = oracle,
    .sample_axis = "m",
    .compute_unit = "tensor",
    .default_shapes = default_shapes(),
    .edge_shapes = edge_shapes(),
    .invalid = [](const Shape& s) -> std::optional<std::string> {
      const auto [m, n, k] = LinearAxes::of(s);
      if (m < 1 || n < 1 || k < 1) return "m, n and k must be at least 1";
      return std::nullopt;
    },
});

}  // namespace
}  // namespace kwb
