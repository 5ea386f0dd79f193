// swiglu_mlp_fwd: y = down(silu(x Wg^T) * (x Wu^T)), the SwiGLU MLP of LLaMA-class models.
// Axes m (tokens), d (model dim), f (hidden dim); x [m, d], Wg [f, d], Wu [f, d], Wd [d, f],
// y [m, d], all in the case dtype; weights in nn.Linear's [out, in] layout (reference/swiglu_mlp.hpp).
//
// Napkin math: three GEMMs of m d f multiply-adds each: 6 m d f FLOPs (the SwiGLU's ~5 m f are
// not counted); bytes x, Wg, Wu, Wd, y once (h is an intermediate, not part of the contract).
// At 8192 x 4096 x 14336 in bf16: 2.89 TFLOP, ~3.7 ms at 790 TFLOP/s; compute-bound, the roof
// is the tensor cores of the case dtype (fp32: tf32).
//
// Inputs: x ~ N(0, 1); Wg, Wu ~ N(0, 1/sqrt(d)) so g, u ~ N(0, 1); Wd ~ N(0, 1/sqrt(f)), so
// y ~ N(0, E[h^2]) with E[h^2] = E[silu(g)^2] ~ 0.36: outputs O(0.6) at every size.
//
// Tolerance: two reduction stages. The down GEMM sums f terms h_j Wd[i, j] of typical size
// 1/sqrt(f) (|h| <~ 1) in fp32: reduction_tolerance(dtype, f, fp32, 1/sqrt(f)). The first stage's
// fp32 error (d terms) is ~u_fp32 relative on g and u, far below what follows. Every
// implementation stores h in the case dtype: the fused kernel rounds h once, the eager baseline
// rounds g, u, silu(g) and h (four roundings of O(1) values). Each rounding perturbs h_j by
// u_dtype |v| / sqrt(3) (std, uniform), of random sign over j, and the down GEMM's f terms of
// weight 1/sqrt(f) carry that to y as a random walk of the same size: std ~ sqrt(4/3) u * 0.7
// ~ 0.8 u_dtype, absolute. The largest of ~1e6 checked outputs sits ~5 std out: atol +=
// 6 u_dtype (bf16 0.023, fp16 0.003, fp32 negligible). fp32 cases add tf32 operand rounding
// twice: in the gate/up GEMM (through h, the same ~6 u_tf32 as above) and in the down GEMM
// (tf32_operand_atol(f, 1/sqrt(f))).
#include "reference/swiglu_mlp.hpp"

#include <cmath>
#include <vector>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/gemm_tolerance.hpp"
#include "reference/matmul_fp64.hpp"
#include "reference/swiglu.hpp"

namespace kwb {

void swiglu_mlp_fp64(std::int64_t m, std::int64_t d, std::int64_t f, const double* x, const double* wg,
                     const double* wu, const double* wd, double* y) {
  std::vector<double> g(static_cast<std::size_t>(m * f)), u(static_cast<std::size_t>(m * f));
  ref::matmul_fp64(m, f, d, {x, d, false}, {wg, d, true}, g.data(), f);
  ref::matmul_fp64(m, f, d, {x, d, false}, {wu, d, true}, u.data(), f);
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = swiglu_forward(g[i], u[i]);  // h, in place of g
  ref::matmul_fp64(m, d, f, {g.data(), f, false}, {wd, f, true}, y, d);
}

namespace {

Tolerance output_tolerance(const Shape& s, DType dtype) {
  const std::int64_t f = SwigluMlpAxes::of(s).f;
  const double term = 1.0 / std::sqrt(static_cast<double>(f));
  Tolerance t = reduction_tolerance(elem_type_of(dtype), f, ElemType::fp32, term);
  t.atol += stored_intermediate_atol(dtype, 6.0);
  if (dtype == DType::fp32) t.atol += 6.0 * kTf32UnitRoundoff + tf32_operand_atol(f, term);
  return t;
}

std::vector<TensorSpec> tensors(const Shape& s, DType dtype) {
  const auto [m, d, f] = SwigluMlpAxes::of(s);
  const double in_std = 1.0 / std::sqrt(static_cast<double>(d)), hidden_std = 1.0 / std::sqrt(static_cast<double>(f));
  return {
      {.name = "x", .dims = {m, d}, .sample_dim = 0, .init = Distribution::normal(0.0, 1.0)},
      {.name = "Wg", .dims = {f, d}, .init = Distribution::normal(0.0, in_std)},
      {.name = "Wu", .dims = {f, d}, .init = Distribution::normal(0.0, in_std)},
      {.name = "Wd", .dims = {d, f}, .init = Distribution::normal(0.0, hidden_std)},
      {.name = "y", .dims = {m, d}, .is_output = true, .sample_dim = 0, .tolerance = output_tolerance(s, dtype)},
  };
}

void oracle(const Shape& s, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const auto [m, d, f] = SwigluMlpAxes::of(s);
  swiglu_mlp_fp64(m, d, f, in[0].values.data(), in[1].values.data(), in[2].values.data(),
                  in[3].values.data(), out[0].values.data());
}

// LLaMA-class MLPs: 1.1B (2048 -> 5632), 7B (4096 -> 11008) and LLaMA-3-8B (4096 -> 14336).
std::vector<Shape> default_shapes() {
  return {swiglu_mlp_shape(2048, 2048, 5632), swiglu_mlp_shape(4096, 4096, 11008),
          swiglu_mlp_shape(8192, 4096, 14336)};
}

// Odd sizes on every axis, one past the 128-wide tiles, d (the first GEMM's k) and f (the down
// GEMM's k) not multiples of 8, and one token of a 7B-sized MLP.
std::vector<Shape> edge_shapes() {
  return {swiglu_mlp_shape(1, 1, 1),      swiglu_mlp_shape(3, 5, 7),     swiglu_mlp_shape(7, 33, 65),
          swiglu_mlp_shape(65, 127, 129), swiglu_mlp_shape(129, 72, 136), swiglu_mlp_shape(131, 256, 1000),
          swiglu_mlp_shape(1, 4096, 11008)};
}

KWB_REGISTER_OP(Op{
    .name = "swiglu_mlp_fwd",
    .description = "SwiGLU MLP: y = (silu(x Wg^T) * (x Wu^T)) Wd^T, x [m, d], Wg and Wu [f, d], Wd [d, f], "
                   "y [m, d] (nn.Linear layouts, no biases)",
    .axes = {{"m", 8192, {}, "tokens (rows of x and y)"},
             {"d", 4096, {}, "model dim (in features of the gate/up projections)"},
             {"f", 14336, {}, "hidden dim (out features of gate/up, in features of down)"}},
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = tensors,
    .work = [](const Shape& s, DType dtype) {
      const auto [m, d, f] = SwigluMlpAxes::of(s);
      return WorkModel{tensor_bytes(tensors(s, dtype), dtype),
                       6 * static_cast<double>(m) * static_cast<double>(d) * static_cast<double>(f)};
    },
    .oracle = oracle,
    .sample_axis = "m",
    .compute_unit = "tensor",
    .default_shapes = default_shapes(),
    .edge_shapes = edge_shapes(),
    .invalid = [](const Shape& s) -> std::optional<std::string> {
      const auto [m, d, f] = SwigluMlpAxes::of(s);
      if (m < 1 || d < 1 || f < 1) return "m, d and f must be at least 1";
      return std::nullopt;
    },
});

}  // namespace
}  // namespace kwb
