// qk_norm_fwd and qk_norm_bwd: per-head L2 normalisation of Q and K with a learned per-dim
// scale, both tensors in one op (one launch for a fused kernel). Layout [tokens, heads,
// head_dim]; K may have fewer heads than Q (grouped KV: kv_heads divides heads).
// The formulas are in reference/qk_norm.hpp.
//
// Napkin math, forward: q and k are read once and q_out, k_out written once; the two weights
// (head_dim each) stay in L2. bytes = 2 * tokens * (heads + kv_heads) * head_dim * sizeof(dtype)
// + 2 * head_dim * sizeof(dtype). FLOPs per element: square + accumulate, * r, * w = 4.
// Backward: reads q, k, dq_out, dk_out, writes dq, dk (3 passes of the activations) plus the
// fp32 weight gradients. FLOPs per element: g = dy*w, g*xhat dot (2), xhat, dx (3), dw (2) ~ 10.
#include <cmath>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/norm_grad_sources.hpp"
#include "reference/qk_norm.hpp"

namespace kwb {
namespace {

Shape qk_shape(std::int64_t tokens, std::int64_t heads, std::int64_t kv_heads, std::int64_t head_dim) {
  return Shape{{{"tokens", tokens}, {"heads", heads}, {"kv_heads", kv_heads}, {"head_dim", head_dim}}};
}

std::vector<AxisSpec> qk_axes() {
  // Read in tables as "t16384 h32/8 d128" (harness/catalogue/shape_label.hpp).
  return {{"tokens", 16384, {}, "independent tokens (batch x sequence)", {}, "t"},
          {"heads", 32, {}, "query heads", {}, "h"},
          {"kv_heads", 8, {}, "key heads (grouped KV: divides heads)", {}, "/"},
          {"head_dim", 128, {}, "elements per head, normalised over", {}, "d"}};
}

std::optional<std::string> qk_invalid(const Shape& s) {
  const QkNormDims d = QkNormDims::of(s);
  if (d.tokens < 1 || d.heads < 1 || d.head_dim < 1) return "tokens, heads and head_dim must be at least 1";
  if (d.kv_heads < 1 || d.heads % d.kv_heads != 0) return "kv_heads must be at least 1 and divide heads";
  return std::nullopt;
}

// Error bounds (harness/catalogue/tolerance.hpp), from the kernels' rounding steps: every variant
// computes in fp32 from the dtype's inputs and rounds its result once (the eager baseline of the
// forward twice: x r cast to the dtype, then times w).
//
// Forward, y = x r w: a chain of multiplies, so every error is relative to y itself (no
// cancellation) and a relative bound is the error bound. r comes from an fp32 sum of head_dim
// squares (one sign: relative error <= (head_dim - 1) u32, halved by the square root) and rsqrtf
// (2 ulp), then two fp32 multiplies: u32 (head_dim / 2 + 8); the dtype roundings: rounding_rtol
// of 2; fp16 outputs under 6e-5 are subnormal: 2 x 2^-25 absolute. The table's flat bf16 atol
// 8e-3 it replaces sat against outputs of ~0.07 (|x| ~ 1 over sqrt(head_dim) = 11): an error of
// 10% of a typical element passed; now ~1% fails in bf16 (a kernel whose vector loads drop the 4
// tail elements of head_dim 100 from the norm, r off by ~2%, fails in most elements against this
// bound and in under 1% against the flat one: tests/reference/qk_norm_error_bound_test.cpp).
// The weights' draws lie in [kWeightLow, kWeightHigh]. Where x r is below fp16's normal range,
// the eager baseline's cast of x r loses up to one subnormal step absolutely, which the weight
// then scales (by up to kWeightHigh) before the output's own rounding adds one more: the absolute
// part is (kWeightHigh + 1) subnormal steps, not 2 (1 to 2 outputs in 20 million failed with 2 in
// fp16 on an H200, where x r was subnormal).
constexpr double kWeightLow = 0.5, kWeightHigh = 1.5;

Tolerance fwd_tolerance(DType dtype, std::int64_t head_dim) {
  const ElemType out = resolve(ElemType::case_dtype, dtype);
  Tolerance t;
  t.atol = (kWeightHigh + 1) * subnormal_rounding(out);
  t.rtol = rounding_rtol(out, 2) + unit_roundoff(ElemType::fp32) * (static_cast<double>(head_dim) / 2 + 8);
  return t;
}

// Backward, dx_e = r g_e - r^3 x_e sum_k g_k x_k (g = dy w): the two terms can cancel, so the
// bound scales with their magnitudes, A_e = r |g_e| + r^3 |x_e| sum_k |g_k x_k| (the oracle's
// abs_sum). Relative errors of fp32 steps, each a fraction of A: r's (head_dim / 2 + 4) u32 (the
// sum of squares and rsqrtf's 2 ulp), tripled in r^3; the dot's head_dim adds; the multiplies and
// the subtraction (<= 10 of them, the eager chain's gss = gr * -0.5 * r^3 and its two-term sum
// included): u32 (2.5 head_dim + 24).
// Then one rounding to the dtype (rounding_rtol) and fp16's subnormal step. The flat bf16 atol
// of ~8e-3 it replaces sat against |dx| ~ r |g| ~ 0.09. The weight gradients sum every token
// (long zero-mean fp32 sums whose partial sums stay ~ sqrt(k) x a term): reduction_tolerance's
// random-walk model is the tighter bound there, so they keep it.
Tolerance dx_tolerance(DType dtype, std::int64_t head_dim) {
  const ElemType out = resolve(ElemType::case_dtype, dtype);
  Tolerance t;
  t.atol = subnormal_rounding(out);
  t.rtol = rounding_rtol(out);
  t.abs_sum_scale = fp32_roundings_scale(2.5 * static_cast<double>(head_dim) + 24);
  return t;
}

// ---------------------------------------------------------------------------------------------
// Forward

std::vector<TensorSpec> fwd_tensors(const Shape& s, DType dtype) {
  const QkNormDims d = QkNormDims::of(s);
  const Tolerance tol = fwd_tolerance(dtype, d.head_dim);
  return {
      {.name = "q", .dims = {d.tokens, d.heads, d.head_dim}, .sample_dim = 0, .init = Distribution::normal(0.0, 1.0)},
      {.name = "k", .dims = {d.tokens, d.kv_heads, d.head_dim}, .sample_dim = 0, .init = Distribution::normal(0.0, 1.0)},
      {.name = "q_weight", .dims = {d.head_dim}, .init = Distribution::uniform(kWeightLow, kWeightHigh)},
      {.name = "k_weight", .dims = {d.head_dim}, .init = Distribution::uniform(kWeightLow, kWeightHigh)},
      {.name = "q_out", .dims = {d.tokens, d.heads, d.head_dim}, .is_output = true, .sample_dim = 0, .tolerance = tol},
      {.name = "k_out", .dims = {d.tokens, d.kv_heads, d.head_dim}, .is_output = true, .sample_dim = 0, .tolerance = tol},
  };
}

// y = x * r * w for each of `vectors` head vectors of `dim` elements.
void normalise_heads(const double* x, const double* w, double* y, std::int64_t vectors, std::int64_t dim) {
  for (std::int64_t v = 0; v < vectors; ++v) {
    const double* xv = x + v * dim;
    double sum_sq = 0;
    for (std::int64_t e = 0; e < dim; ++e) sum_sq += xv[e] * xv[e];
    const double r = 1.0 / std::sqrt(sum_sq + kQkNormEps);
    for (std::int64_t e = 0; e < dim; ++e) y[v * dim + e] = xv[e] * r * w[e];
  }
}

void fwd_oracle(const Shape& shape, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const QkNormDims d = QkNormDims::of(shape);
  normalise_heads(in[0].values.data(), in[2].values.data(), out[0].values.data(), d.q_vectors(), d.head_dim);
  normalise_heads(in[1].values.data(), in[3].values.data(), out[1].values.data(), d.k_vectors(), d.head_dim);
}

std::vector<Shape> fwd_default_shapes() {
  return {
      qk_shape(4096, 32, 8, 128),   qk_shape(16384, 32, 8, 128),  // Llama-3-8B style, the target shape
      qk_shape(32768, 32, 8, 128),  qk_shape(16384, 64, 8, 128),  // 70B style
      qk_shape(16384, 16, 16, 128), qk_shape(16384, 32, 8, 64),   // no grouping; small heads
      qk_shape(32768, 64, 8, 64),   qk_shape(16384, 32, 8, 100),  // head_dim not a multiple of 8
      qk_shape(4100, 40, 8, 128),
  };
}

// The fused kernels keep a head vector in registers of up to one warp: head_dim 256 is their
// reach at any alignment (odd sizes use scalar accesses), 257 one past it.
std::vector<Shape> edge_shapes(bool include_head_dim_1) {
  std::vector<Shape> shapes;
  if (include_head_dim_1) shapes.push_back(qk_shape(7, 3, 1, 1));
  for (std::int64_t head_dim : {7, 33, 64, 100, 128, 130, 256, 257}) shapes.push_back(qk_shape(7, 3, 1, head_dim));
  shapes.push_back(qk_shape(1, 1, 1, 128));
  shapes.push_back(qk_shape(33, 4, 2, 128));
  shapes.push_back(qk_shape(300, 8, 8, 64));
  shapes.push_back(qk_shape(1000, 6, 2, 33));
  shapes.push_back(qk_shape(131, 32, 8, 128));
  return shapes;
}

KWB_REGISTER_OP(Op{
    .name = "qk_norm_fwd",
    .description = "QK-norm forward: per head vector, y = x * rsqrt(sum_d x^2 + 1e-6) * w[d], for q with "
                   "q_weight and k with k_weight; layout [tokens, heads, head_dim], kv_heads divides heads",
    .axes = qk_axes(),
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = fwd_tensors,
    .work =
        [](const Shape& s, DType dtype) {
          const QkNormDims d = QkNormDims::of(s);
          const double elements = static_cast<double>(d.q_vectors() + d.k_vectors()) * static_cast<double>(d.head_dim);
          return WorkModel{tensor_bytes(fwd_tensors(s, dtype), dtype), 4 * elements};
        },
    .oracle = fwd_oracle,
    .sample_axis = "tokens",
    .compute_unit = "fp32",
    .default_shapes = fwd_default_shapes(),
    .edge_shapes = edge_shapes(true),
    .invalid = qk_invalid,
});

// ---------------------------------------------------------------------------------------------
// Backward

std::vector<TensorSpec> bwd_tensors(const Shape& s, DType dtype) {
  const QkNormDims d = QkNormDims::of(s);
  // |dy * xhat| ~ 1 / sqrt(head_dim) per term of a weight gradient.
  const double term = 1.0 / std::sqrt(static_cast<double>(d.head_dim));
  const Tolerance dx_tol = dx_tolerance(dtype, d.head_dim);
  return {
      {.name = "q", .dims = {d.tokens, d.heads, d.head_dim}, .sample_dim = 0, .init = Distribution::normal(0.0, 1.0)},
      {.name = "k", .dims = {d.tokens, d.kv_heads, d.head_dim}, .sample_dim = 0, .init = Distribution::normal(0.0, 1.0)},
      {.name = "q_weight", .dims = {d.head_dim}, .init = Distribution::uniform(kWeightLow, kWeightHigh)},
      {.name = "k_weight", .dims = {d.head_dim}, .init = Distribution::uniform(kWeightLow, kWeightHigh)},
      {.name = "dq_out", .dims = {d.tokens, d.heads, d.head_dim}, .sample_dim = 0, .init = Distribution::normal(0.0, 1.0)},
      {.name = "dk_out", .dims = {d.tokens, d.kv_heads, d.head_dim}, .sample_dim = 0, .init = Distribution::normal(0.0, 1.0)},
      {.name = "dq", .dims = {d.tokens, d.heads, d.head_dim}, .is_output = true, .sample_dim = 0, .tolerance = dx_tol},
      {.name = "dk", .dims = {d.tokens, d.kv_heads, d.head_dim}, .is_output = true, .sample_dim = 0, .tolerance = dx_tol},
      {.name = "dq_weight", .dims = {d.head_dim}, .is_output = true, .sample_dim = -1, .elem = ElemType::fp32,
       .tolerance = reduction_tolerance(ElemType::fp32, d.q_vectors(), ElemType::fp32, term)},
      {.name = "dk_weight", .dims = {d.head_dim}, .is_output = true, .sample_dim = -1, .elem = ElemType::fp32,
       .tolerance = reduction_tolerance(ElemType::fp32, d.k_vectors(), ElemType::fp32, term)},
  };
}

// dx with its error magnitudes dx_abs (dx_tolerance's A) and the weight gradient (summed into dw)
// of `vectors` head vectors.
void head_gradients(const double* x, const double* w, const double* dy, double* dx, double* dx_abs, double* dw,
                    std::int64_t vectors, std::int64_t dim) {
  for (std::int64_t e = 0; e < dim; ++e) dw[e] = 0;
  for (std::int64_t v = 0; v < vectors; ++v) {
    const double* xv = x + v * dim;
    const double* dyv = dy + v * dim;
    double sum_sq = 0;
    for (std::int64_t e = 0; e < dim; ++e) sum_sq += xv[e] * xv[e];
    const double r = 1.0 / std::sqrt(sum_sq + kQkNormEps);
    double dot = 0, dot_abs = 0;  // sum_e g[e] * xhat[e] and sum_e |g[e] * xhat[e]|
    for (std::int64_t e = 0; e < dim; ++e) {
      const double term = dyv[e] * w[e] * xv[e] * r;
      dot += term;
      dot_abs += std::fabs(term);
    }
    for (std::int64_t e = 0; e < dim; ++e) {
      const double xhat = xv[e] * r;
      dx[v * dim + e] = r * (dyv[e] * w[e] - xhat * dot);
      dx_abs[v * dim + e] = r * (std::fabs(dyv[e] * w[e]) + std::fabs(xhat) * dot_abs);
      dw[e] += dyv[e] * xhat;
    }
  }
}

void bwd_oracle(const Shape& shape, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const QkNormDims d = QkNormDims::of(shape);
  out[0].abs_sum.assign(out[0].values.size(), 0.0);
  out[1].abs_sum.assign(out[1].values.size(), 0.0);
  head_gradients(in[0].values.data(), in[2].values.data(), in[4].values.data(), out[0].values.data(),
                 out[0].abs_sum.data(), out[2].values.data(), d.q_vectors(), d.head_dim);
  head_gradients(in[1].values.data(), in[3].values.data(), in[5].values.data(), out[1].values.data(),
                 out[1].abs_sum.data(), out[3].values.data(), d.k_vectors(), d.head_dim);
}

// Verified in full where no device serves the oracles (the weight gradients sum every token): at
// most 64M elements per tensor.
std::vector<Shape> bwd_default_shapes() {
  return {
      qk_shape(4096, 32, 8, 128),  qk_shape(16384, 32, 8, 128), qk_shape(8192, 64, 8, 128),
      qk_shape(16384, 16, 16, 128), qk_shape(16384, 32, 8, 64), qk_shape(32768, 32, 8, 64),
      qk_shape(16384, 32, 8, 100), qk_shape(4100, 40, 8, 128),
  };
}

// dq_weight and dk_weight over every token, on the device (a large case then samples its dq and
// dk tokens). Their tolerance is flat: no magnitudes.
void bwd_device_weight_grads(const DeviceOracleArgs& a, std::vector<HostTensor>& expected) {
  ref::fill_norm_grads_on_device(a, ref::qk_norm_bwd_grad_sources(a.shape), expected);
}

KWB_REGISTER_OP(Op{
    .name = "qk_norm_bwd",
    .description = "QK-norm backward (norms recomputed from q, k): g = dy * w, xhat = x * rsqrt(sum_d x^2 + "
                   "1e-6), dx = rsqrt(..) * (g - xhat * sum_d g * xhat), dw = sum over tokens and heads of "
                   "dy * xhat (fp32), for q and k",
    .axes = qk_axes(),
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = bwd_tensors,
    .work =
        [](const Shape& s, DType dtype) {
          const QkNormDims d = QkNormDims::of(s);
          const double elements = static_cast<double>(d.q_vectors() + d.k_vectors()) * static_cast<double>(d.head_dim);
          return WorkModel{tensor_bytes(bwd_tensors(s, dtype), dtype), 10 * elements};
        },
    .oracle = bwd_oracle,
    .device_unaligned_oracle = bwd_device_weight_grads,
    .sample_axis = "tokens",
    .compute_unit = "fp32",
    .default_shapes = bwd_default_shapes(),
    // head_dim 1 is left out: there dx = g r eps / (x^2 + eps) is a cancellation that fp32
    // cannot resolve for small |x| (any fp32 kernel misses the fp64 value by ~u |g| / |x|).
    .edge_shapes = edge_shapes(false),
    .invalid = qk_invalid,
});

}  // namespace
}  // namespace kwb
