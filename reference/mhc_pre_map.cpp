// mhc_pre_map_fwd, mhc_pre_map_bwd_dx and mhc_pre_map_bwd_hpre: the mHC-lite pre-map, which
// mixes the n = 4 residual streams of each token into the layer's input, and its two gradients
// (formulas in reference/mhc_pre_map.hpp).
//
// Napkin math: no reuse across tokens and almost no arithmetic, so every tensor crosses DRAM
// once and the roof is the copy bandwidth (s = sizeof(dtype), n = 4):
//   fwd:       read H (n T C s) and h_pre (4 n T), write X (T C s)        -> (n + 1) T C s + 16 T
//   bwd_dx:    read h_pre (4 n T) and dX (T C s), write dH (n T C s)      -> (n + 1) T C s + 16 T
//   bwd_hpre:  read H (n T C s) and dX (T C s), write dh_pre (4 n T)      -> (n + 1) T C s + 16 T
// bf16 65536 x 1024: 671 MB + 1 MB each, ~224 us at ~3000 GB/s. FLOPs (2 per multiply-add):
// fwd 2 n T C (n multiply-adds per X element), bwd_dx n T C (one product per dH element),
// bwd_hpre 2 n T C (one multiply-add per H element): ~1 FLOP per byte, memory-bound.
//
// Inputs: H and dX ~ N(0, 1) (activations and their gradients, unit scale); h_pre ~ U(0, 1),
// the range of the sigmoid that produces it in the stack (mHC: h_pre = sigmoid(z)). Its values
// are positive and below 1, as in training; none is exactly 0, so every stream contributes.
#include "reference/mhc_pre_map.hpp"

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/mhc.hpp"

namespace kwb {
namespace {

Distribution pre_coefficients() { return Distribution::uniform(0.0, 1.0); }
Distribution unit_normal() { return Distribution::normal(0.0, 1.0); }

// Error bounds (harness/catalogue/tolerance.hpp). Every variant (the fused kernel and the eager
// baseline, whose products and sum are fp32 by type promotion) computes in fp32 and rounds once:
//   X = sum of n = 4 products h_pre H: n fp32 roundings of partial sums <= A = sum_i |h_pre_i H_i|
//     (the oracle's abs_sum), then X's rounding (rounding_rtol): a cancelling X (|X| << A) keeps
//     the fp32 part, nothing more. The table's bf16 atol 8e-3 it replaces let an error of 8e-3
//     pass at every X, e.g. h_pre rounded to bf16 (up to 2^-9 A ~ 4e-3 A).
//   dH = h_pre dX: one fp32 product, one rounding: relative, rounding_rtol + 2 u32.
// fp16 is not among these ops' dtypes, but subnormal_rounding keeps the floor honest for any type.
Tolerance x_tolerance(DType dtype) {
  const ElemType out = resolve(ElemType::case_dtype, dtype);
  Tolerance t;
  t.atol = subnormal_rounding(out);
  t.rtol = rounding_rtol(out);
  t.abs_sum_scale = fp32_roundings_scale(kMhcStreams);
  return t;
}
Tolerance dh_tolerance(DType dtype) {
  const ElemType out = resolve(ElemType::case_dtype, dtype);
  return {subnormal_rounding(out), rounding_rtol(out) + 2 * unit_roundoff(ElemType::fp32)};
}

// dh_pre sums C products H * dX (zero-mean, unit scale) in fp32: the error grows with C, so the
// tolerance is a C-term fp32 reduction's (its random-walk model is tighter than a bound on
// sum |term| for a long zero-mean sum).
Tolerance dh_pre_tolerance(const Shape& s) {
  return reduction_tolerance(ElemType::fp32, MhcAxes::of(s).channels, ElemType::fp32, 1.0);
}

std::vector<TensorSpec> fwd_tensors(const Shape& s, DType dtype) {
  const std::int64_t tokens = MhcAxes::of(s).tokens;
  return {
      mhc_streams_tensor("H", s, unit_normal()),                            // [T, n, C]
      mhc_coefficients("h_pre", {tokens, kMhcStreams}, pre_coefficients()),  // [T, n] fp32
      mhc_token_output("X", s, x_tolerance(dtype)),                         // [T, C]
  };
}

std::vector<TensorSpec> bwd_dx_tensors(const Shape& s, DType dtype) {
  const std::int64_t tokens = MhcAxes::of(s).tokens;
  return {
      mhc_coefficients("h_pre", {tokens, kMhcStreams}, pre_coefficients()),  // [T, n] fp32
      mhc_token_tensor("dX", s, unit_normal()),                             // [T, C]
      mhc_streams_output("dH", s, dh_tolerance(dtype)),                     // [T, n, C]
  };
}

std::vector<TensorSpec> bwd_hpre_tensors(const Shape& s, DType) {
  const std::int64_t tokens = MhcAxes::of(s).tokens;
  return {
      mhc_streams_tensor("H", s, unit_normal()),                                    // [T, n, C]
      mhc_token_tensor("dX", s, unit_normal()),                                     // [T, C]
      mhc_coefficients_output("dh_pre", {tokens, kMhcStreams}, dh_pre_tolerance(s)),  // [T, n] fp32
  };
}

void fwd_oracle(const Shape& s, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const auto [tokens, channels] = MhcAxes::of(s);
  mhc_pre_map_forward(in[0].values, in[1].values, tokens, channels, out[0].values, &out[0].abs_sum);
}
void bwd_dx_oracle(const Shape& s, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const auto [tokens, channels] = MhcAxes::of(s);
  mhc_pre_map_backward_dx(in[0].values, in[1].values, tokens, channels, out[0].values);
}
void bwd_hpre_oracle(const Shape& s, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const auto [tokens, channels] = MhcAxes::of(s);
  mhc_pre_map_backward_hpre(in[0].values, in[1].values, tokens, channels, out[0].values);
}

KWB_REGISTER_OP(mhc_op(
    "mhc_pre_map_fwd", "mHC-lite pre-map: X[t, c] = sum_i h_pre[t, i] * H[t, i, c] (n = 4 streams, fp32 h_pre)",
    fwd_tensors, [](const Shape& s) { return 2.0 * kMhcStreams * mhc_token_channels(s); }, fwd_oracle));

KWB_REGISTER_OP(mhc_op(
    "mhc_pre_map_bwd_dx", "mHC-lite pre-map backward to the streams: dH[t, i, c] = h_pre[t, i] * dX[t, c]",
    bwd_dx_tensors, [](const Shape& s) { return 1.0 * kMhcStreams * mhc_token_channels(s); }, bwd_dx_oracle));

KWB_REGISTER_OP(mhc_op(
    "mhc_pre_map_bwd_hpre",
    "mHC-lite pre-map backward to the coefficients: dh_pre[t, i] = sum_c H[t, i, c] * dX[t, c] "
    "(fp32 accumulation and output)",
    bwd_hpre_tensors, [](const Shape& s) { return 2.0 * kMhcStreams * mhc_token_channels(s); }, bwd_hpre_oracle));

}  // namespace
}  // namespace kwb
