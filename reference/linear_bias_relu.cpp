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
// Tolerance (reference/gemm_tolerance.hpp): each output sums k products of typical size
// 1/sqrt(k) in fp32: reduction_tolerance(dtype, k, fp32, 1/sqrt(k)); fp32 cases add the tf32
// operand rounding of the tensor-core variants (~0.004 absolute at any k); and the baseline rounds
// x W^T (|.| up to ~4) to the dtype before adding b, a second rounding that survives the
// cancellation of x W^T + b: atol += 4 u_dtype (bf16: 0.016, fp16: 0.002).
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
                           const double* b, double* y) {
  // y = x (m x k, ld k) * W^T (W stored n x k, ld k), then bias and ReLU row by row.
  ref::matmul_fp64(m, n, k, {x, k, false}, {w, k, true}, y, n);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) y[i * n + j] = std::max(0.0, y[i * n + j] + b[j]);
}

namespace {

Tolerance output_tolerance(const Shape& s, DType dtype) {
  const std::int64_t k = LinearAxes::of(s).k;
  const double term = 1.0 / std::sqrt(static_cast<double>(k));
  Tolerance t = reduction_tolerance(elem_type_of(dtype), k, ElemType::fp32, term);
  if (dtype == DType::fp32) t.atol += tf32_operand_atol(k, term);
  t.atol += stored_intermediate_atol(dtype, 4.0);
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
  linear_bias_relu_fp64(m, n, k, in[0].values.data(), in[1].values.data(),
                        in[2].values.data(), out[0].values.data());
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
// 4096-wide layer (a decode step), and 257 x 129 x 264 (one past in m and n, k a multiple of 8).
std::vector<Shape> edge_shapes() {
  return {linear_shape(1, 1, 1),       linear_shape(3, 7, 5),      linear_shape(7, 3, 65),
          linear_shape(65, 127, 33),   linear_shape(127, 65, 129), linear_shape(129, 129, 136),
          linear_shape(131, 257, 127), linear_shape(256, 256, 8),  linear_shape(257, 129, 264),
          linear_shape(1, 4096, 4096)};
}

KWB_REGISTER_OP(Op{
    .name = "linear_bias_relu",
    .description = "nn.Linear + ReLU: y = max(0, x W^T + b), x [m, k], W [n, k], b [n], y [m, n]",
    .axes = {{"m", 8192, {}, "tokens (rows of x and y)"},
             {"n", 8192, {}, "out features (rows of W)"},
             {"k", 8192, {}, "in features (the reduction)"}},
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
