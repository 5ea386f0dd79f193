// mhc_rmsnorm_project_fwd and mhc_rmsnorm_project_bwd_dx: the RMSNorm of a token's n = 4
// streams, flattened (K = n * C values), projected to the P = 32 per-token coefficient logits
// of mHC-lite, and the gradient of the streams through both. Formulas in
// reference/mhc_rmsnorm_project.hpp.
//
// Napkin math, forward (bf16, 65536 x 1024): H is read once (512 MB), W (K x P = 256 KB) stays
// in L2, Z and r are small fp32 outputs (8 MB + 256 KB): ~520 MB, ~175 us at 3000 GB/s. FLOPs
// per token 2 K P (projection) + 2 K (sum of squares) + P (scale): ~32 FLOP per bf16 byte, more
// than CUDA cores sustain at DRAM speed, hence the tensor-core compute unit below.
// Backward: reads H, W, r, dZ once and writes dH once: ~2x H's bytes. FLOPs per token 2 K P
// (g = dZ @ W^T) + 2 K (s = h.g) + 3 K (dh = r g - c h).
//
// Inputs: H ~ N(0, 1) (a residual state of unit RMS, so r ~ 1); W ~ N(0, 1 / sqrt(K)) so that
// each Z_p = sum of K products of unit-variance h and W of variance 1/K is O(1) (as a
// projection initialised with std 1/sqrt(fan_in)); bwd_dx's r ~ U(0.9, 1.1) (the forward's r of
// such an H, saved by the stack rather than recomputed), dZ ~ N(0, 1).
#include <cmath>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/mhc.hpp"
#include "reference/mhc_rmsnorm_project.hpp"

namespace kwb {
namespace {

std::int64_t flat_len(const Shape& s) { return MhcAxes::of(s).flat_len(); }  // K = n * C

TensorSpec weight_tensor(const Shape& s) {
  const double stddev = 1.0 / std::sqrt(static_cast<double>(flat_len(s)));
  return {.name = "W", .dims = {flat_len(s), kMhcProjectWidth}, .init = Distribution::normal(0.0, stddev)};
}

// ---------------------------------------------------------------------------------------------
// Forward

// Z's error bound (harness/catalogue/tolerance.hpp). Z_p = r sum_k h_k W[k, p], K fp32 sums of
// the device-rounded H and W (the oracle sees those exactly), then r's multiply and the store:
//  - The tensor-core kernels add each MMA's block of products to an fp32 accumulator that may
//    truncate (up to 1 ulp toward zero, 2 u |acc|, at every block): the error is then
//    -sum_j d_j acc_j over the blocks' partial sums, d_j in [0, 2u): a drift against the
//    accumulator's sign that does not cancel as rounding to nearest does. Its mean part,
//    u sum_j acc_j = u sum_k t_k (n_b - b_k + 1) with b_k the block of term k, has for terms of
//    random sign in any fixed order a std of u n_b R / sqrt(3) (terms spread evenly over the
//    blocks), with n_b = 2 ceil(K / 16) blocks (an m16n8k16 MMA taken as two k8 halves) and
//    R = sqrt(sum t_k^2) per element (the oracle's root_sum_sq); the bound takes kBoundSigmas of
//    it (+2 blocks: r's multiply and the store). The FMA kernels round to nearest, ~u sqrt(K / 3)
//    partial sums of size R: far inside.
//  - r's own relative error (its tolerance's rtol) and two roundings (r's multiply, the store).
// The old flat bound (4 sqrt(K) u (1 + |Z|), a random-walk model of rounding to nearest) failed
// 1 of 16,896 elements of fused_v3 at bf16 32768 x 4096 (K 16384) on an H100 (2026-11-26: 7.2e-5
// where it allowed ~4e-5). tests/reference/mhc_error_bound_test.cpp simulates the truncating blocks.
Tolerance z_tolerance(std::int64_t k, const Tolerance& r_tolerance) {
  const double blocks = 2.0 * static_cast<double>((k + 15) / 16);
  Tolerance t;
  t.rtol = r_tolerance.rtol + rounding_rtol(ElemType::fp32, 2);
  t.root_sum_sq_scale = kBoundSigmas * unit_roundoff(ElemType::fp32) * (blocks + 2) / std::sqrt(3.0);
  return t;
}

std::vector<TensorSpec> fwd_tensors(const Shape& s, DType) {
  const std::int64_t t = MhcAxes::of(s).tokens, k = flat_len(s);
  // r sums K squares of size ~1 (scaled by 1/K): a one-sign sum whose relative error grows as
  // sqrt(K) u; its absolute part is that of terms of size 1/K. Flat: an fp32 output of O(1).
  const Tolerance r_tolerance = reduction_tolerance(ElemType::fp32, k, ElemType::fp32, 1.0 / k);
  return {
      mhc_streams_tensor("H", s, Distribution::normal(0.0, 1.0)),
      weight_tensor(s),
      mhc_coefficients_output("Z", {t, kMhcProjectWidth}, z_tolerance(k, r_tolerance)),
      mhc_coefficients_output("r", {t}, r_tolerance),
  };
}

void fwd_oracle(const Shape& s, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const std::int64_t tokens = MhcAxes::of(s).tokens, k = flat_len(s);
  const double* h = in[0].values.data();
  const double* w = in[1].values.data();
  double* z = out[0].values.data();
  double* r = out[1].values.data();
  out[0].root_sum_sq.resize(out[0].values.size());
  for (std::int64_t t = 0; t < tokens; ++t)
    r[t] = mhc_rmsnorm_project_token(h + t * k, w, z + t * kMhcProjectWidth, k, kMhcProjectWidth,
                                     out[0].root_sum_sq.data() + t * kMhcProjectWidth);
}

double token_elements(const Shape& s) {
  return static_cast<double>(MhcAxes::of(s).tokens) * static_cast<double>(flat_len(s));
}

// FLOPs: K = n*C multiply-adds per output for P outputs, the sum of squares, r times each output.
// 32 FLOP per byte in bf16: the fused bf16 kernel runs the projection on tensor cores (mma.sync
// bf16, fp32 accumulation); fp32 cases take an FMA path below this roof.
KWB_REGISTER_OP(mhc_op(
    "mhc_rmsnorm_project_fwd",
    "mHC-lite RMSNorm + projection: r[t] = rsqrt(mean over n*C of H[t]^2 + 1e-6), "
    "Z[t] = r[t] * (H[t] flattened @ W), W [n*C, 32]; Z and r fp32",
    fwd_tensors,
    [](const Shape& s) {
      const double e = token_elements(s);
      return 2 * e * kMhcProjectWidth + 2 * e + static_cast<double>(MhcAxes::of(s).tokens) * kMhcProjectWidth;
    },
    fwd_oracle, "tensor_bf16"));

// ---------------------------------------------------------------------------------------------
// Backward (dH only: W's gradient is another op)

// dH's error bound (harness/catalogue/tolerance.hpp). dh_k = r g_k - (r^3 / K) s h_k, with g_k
// a dot of P = 32 products dZ_p W[k, p] and s = sum over the K values of h_k g_k, all in fp32,
// then one rounding (rounding_rtol). The two terms can cancel, so the bound scales with their
// magnitudes A_k = r sum_p |dZ_p W[k, p]| + (r^3 / K) |h_k| sum_j |h_j g_j| (the oracle's
// abs_sum). The longest chains of fp32 adds: g's 32 (an FMA chain; cuBLASLt's K = 32 GEMM in the
// baseline), s's per-thread partial sums (K / 32 for a warp per token, up to K / 4 for a lane
// that owns 2 columns of every 8-column tile in the tensor-core and tiled kernels) plus the
// shuffles, and ~6 multiplies and the subtraction: fp32_roundings_scale(32 + K / 4 + 8) A. In bf16 the tensor-core variant splits the fp32 dZ into two bf16 halves, dZ_hi + dZ_lo,
// leaving 2^-16 |dZ| out of g: 2^-16 more on A. The flat bf16 atol 8e-3 it replaces sat against
// |dH| ~ |g| ~ sqrt(32 / K) (0.09 at K = 4096, 0.04 at 16384).
Tolerance dh_tolerance(DType dtype, std::int64_t k) {
  const ElemType out = resolve(ElemType::case_dtype, dtype);
  Tolerance t;
  t.atol = subnormal_rounding(out);
  t.rtol = rounding_rtol(out);
  t.abs_sum_scale = fp32_roundings_scale(static_cast<double>(kMhcProjectWidth + k / 4 + 8)) +
                    (out == ElemType::bf16 ? std::ldexp(1.0, -16) : 0.0);
  return t;
}

std::vector<TensorSpec> bwd_tensors(const Shape& s, DType dtype) {
  const std::int64_t t = MhcAxes::of(s).tokens, k = flat_len(s);
  const Tolerance dh_tol = dh_tolerance(dtype, k);
  return {
      mhc_streams_tensor("H", s, Distribution::normal(0.0, 1.0)),
      weight_tensor(s),
      mhc_coefficients("r", {t}, Distribution::uniform(0.9, 1.1)),
      mhc_coefficients("dZ", {t, kMhcProjectWidth}, Distribution::normal(0.0, 1.0)),
      mhc_streams_output("dH", s, dh_tol),
  };
}

void bwd_oracle(const Shape& s, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const std::int64_t tokens = MhcAxes::of(s).tokens, k = flat_len(s);
  const double* h = in[0].values.data();
  const double* w = in[1].values.data();
  const double* r = in[2].values.data();
  const double* dz = in[3].values.data();
  double* dh = out[0].values.data();
  out[0].abs_sum.assign(out[0].values.size(), 0.0);
  double* dh_abs = out[0].abs_sum.data();
  for (std::int64_t t = 0; t < tokens; ++t)
    mhc_rmsnorm_project_token_grad(h + t * k, w, r[t], dz + t * kMhcProjectWidth, dh + t * k, k, kMhcProjectWidth,
                                   dh_abs + t * k);
}

// The fused backward has no performance target and does its FLOPs on CUDA cores.
KWB_REGISTER_OP(mhc_op(
    "mhc_rmsnorm_project_bwd_dx",
    "mHC-lite RMSNorm + projection backward to the streams, K = n*C, r saved by the forward: "
    "g = dZ[t] @ W^T, s = H[t].g, dH[t] = r g - (r^3 / K) s H[t]",
    bwd_tensors,
    [](const Shape& s) {
      const double e = token_elements(s);
      return 2 * e * kMhcProjectWidth + 5 * e;
    },
    bwd_oracle));

}  // namespace
}  // namespace kwb
