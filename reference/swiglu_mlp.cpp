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
// Tolerance: an error bound per element (reference/gemm_tolerance.hpp). The oracle returns, for
// y[i, c], the magnitudes of the down projection's f terms t_j = h[i, j] Wd[c, j]: A and R
// (R ~ 0.6 with these inputs). The roundings:
//  - the down GEMM: fp32 accumulation over f and the output's rounding (dot_product_bound);
//  - h in the dtype: the fused kernel rounds h once; the eager baseline rounds g, u, silu(g) and h.
//    Each perturbs t_j relatively (g's by a factor r = 1 + g (1 - sigmoid(g)), E[r^2] = 1.45 weighted
//    by h^2), of random sign over j: ~5 roundings a term, term_rounding_scale(u, 5) = 10.3 u R.
//    At worst (|r| <= ~6 at g = -5, one term) 9 u |t_j|: still inside at f = 1.
//  - fp32 cases: tf32 operands in both GEMMs. The down GEMM's: 2 roundings a term. The gate/up
//    GEMM's: dg, du ~ 0.82 u_tf32 (R_g = R_u ~ 1) move h_j by dg silu'(g) u + du silu(g)
//    (E[silu'^2 u^2 + silu^2] = 0.74, against E[h^2] = 0.36 in R): ~4 more. term_rounding_scale(
//    u_tf32, 6) = 11.3 u_tf32 R. The gate/up error does not vanish with t_j (h_j ~ 0 at u_j ~ 0),
//    so sums of few terms, where R can be small by chance, get a floor of one such term at full
//    weight, 8 sigma: atol = 8 * 0.82 * 0.86 u_tf32 / sqrt(f) (|Wd| ~ 1 / sqrt(f)).
// Outputs near 0 are checked at ~10 u R: 0.024 in bf16 (the old flat atol was 0.031).
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
                     const double* wu, const double* wd, double* y, double* abs_sum, double* root_sum_sq) {
  std::vector<double> g(static_cast<std::size_t>(m * f)), u(static_cast<std::size_t>(m * f));
  ref::matmul_fp64(m, f, d, {x, d, false}, {wg, d, true}, g.data(), f);
  ref::matmul_fp64(m, f, d, {x, d, false}, {wu, d, true}, u.data(), f);
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = swiglu_forward(g[i], u[i]);  // h, in place of g
  if (abs_sum == nullptr || root_sum_sq == nullptr) {
    ref::matmul_fp64(m, d, f, {g.data(), f, false}, {wd, f, true}, y, d);
    return;
  }
  ref::matmul_fp64(m, d, f, {g.data(), f, false}, {wd, f, true}, y, d, 0.0, {abs_sum, root_sum_sq});
  for (std::int64_t e = 0; e < m * d; ++e) root_sum_sq[e] = std::sqrt(root_sum_sq[e]);
}

namespace {

// The derivation is in the header comment above.
Tolerance output_tolerance(const Shape& s, DType dtype) {
  const std::int64_t f = SwigluMlpAxes::of(s).f;
  Tolerance t = dot_product_bound(elem_type_of(dtype), f);
  if (dtype != DType::fp32) {
    t.root_sum_sq_scale += term_rounding_scale(unit_roundoff(elem_type_of(dtype)), 5);
    return t;
  }
  t.root_sum_sq_scale += term_rounding_scale(kTf32UnitRoundoff, 6);
  t.atol += kBoundSigmas * 0.82 * 0.86 * kTf32UnitRoundoff / std::sqrt(static_cast<double>(f));
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
  HostTensor& y = out[0];
  y.abs_sum.resize(y.values.size());
  y.root_sum_sq.resize(y.values.size());
  swiglu_mlp_fp64(m, d, f, in[0].values.data(), in[1].values.data(), in[2].values.data(), in[3].values.data(),
                  y.values.data(), y.abs_sum.data(), y.root_sum_sq.data());
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
    .axes = {{"m", 8192, {}, "tokens (rows of x and y)", {}, "m"},
             {"d", 4096, {}, "model dim (in features of the gate/up projections)", {}, "d"},
             {"f", 14336, {}, "hidden dim (out features of gate/up, in features of down)", {}, "f"}},
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
