// What the seven mHC-lite ops share: hyper-connections with n = 4 residual streams.
//
// A layer sees the residual state H [T, n, C] (T tokens, n streams of C channels) and its own
// output F [T, C]. Per token, small fp32 coefficient tensors mix the streams:
//   pre-map   X[t, c] = sum_i h_pre[t, i] * H[t, i, c]                      (the layer's input)
//   post-res  Hout[t, i, c] = sum_j R[t, i, j] * H[t, j, c] + h_post[t, i] * F[t, c]
// R[t] is doubly stochastic (a convex combination of the n! permutation matrices). The
// coefficients come from a projection of the normalised state:
//   r[t] = rsqrt(mean over n*C of H[t]^2 + eps),  Z[t] = (r[t] * H[t] flattened) @ W,
//   W [n*C, P], P = 2n + n! = 32 (n pre, n post and n! permutation weights per token).
//
// Axes: tokens (T, up to 65536) and channels (C, 1024..4096). The activations H, F, X and their
// gradients are in the case dtype (bf16 or fp32, fp32 accumulation); the coefficient tensors
// (h_pre, h_post, R, r, Z and their gradients) are fp32.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/catalogue/registry.hpp"

namespace kwb {

inline constexpr std::int64_t kMhcStreams = 4;                       // n
inline constexpr std::int64_t kMhcProjectWidth = 2 * 4 + 24;         // P = 2n + n!
inline constexpr double kMhcRmsEps = 1e-6;

// The axes of an mHC-lite case, read once: const auto [tokens, channels] = MhcAxes::of(a.shape).
struct MhcAxes {
  std::int64_t tokens = 0;    // T
  std::int64_t channels = 0;  // C of each of the n streams
  static MhcAxes of(const Shape& s) { return {s.at("tokens"), s.at("channels")}; }
  std::int64_t flat_len() const { return kMhcStreams * channels; }  // K = n * C: one token's streams
};

inline Shape mhc_shape(std::int64_t tokens, std::int64_t channels) {
  return Shape{{{"tokens", tokens}, {"channels", channels}}};
}

inline std::vector<AxisSpec> mhc_axes() {
  return {{"tokens", 65536, {}, "tokens T (batch x sequence)", {}, "t"},
          {"channels", 1024, {}, "channels C of each of the n = 4 residual streams", {}, "c"}};
}

// Realistic sizes: the 65536 x 1024 target shape, wider models, and a C that is not a multiple
// of any vector width (1000) with a T that is not a multiple of a token tile (16383). The
// largest case (32768 x 4096, fp32) holds 2 GiB per [T, n, C] tensor.
inline std::vector<Shape> mhc_default_shapes() {
  return {mhc_shape(4096, 1024), mhc_shape(16384, 2048), mhc_shape(65536, 1024),
          mhc_shape(32768, 4096), mhc_shape(16383, 1000)};
}

// The odd sizes every kernel must handle, each verified in full and run under compute-sanitizer:
// one token, a few, one past a tile of 4096 (at C = 1000), one short of it at C = 1024 (4097 x 4096
// elements would pass the verifier's full-check limit of 2^24 and be sampled); C = 1000 (the stack's odd width, still a multiple of
// 8), C = 1020 (a whole number of 4-wide fp32 packs but not of 8-wide bf16 ones), C = 1003 and 33
// (no pack width at all), tiny C, wide C.
inline std::vector<Shape> mhc_edge_shapes() {
  return {mhc_shape(1, 1),       mhc_shape(1, 1000),    mhc_shape(3, 1000),    mhc_shape(3, 1024),
          mhc_shape(7, 33),      mhc_shape(5, 1003),    mhc_shape(9, 1020),    mhc_shape(4097, 1000),
          mhc_shape(4095, 1024), mhc_shape(65, 4096)};
}

inline std::optional<std::string> mhc_invalid(const Shape& s) {
  const auto [tokens, channels] = MhcAxes::of(s);
  if (tokens < 1 || channels < 1) return "tokens and channels must be at least 1";
  return std::nullopt;
}

// T * C: what the per-(token, channel) FLOP counts of the work models multiply.
inline double mhc_token_channels(const Shape& s) {
  const auto [tokens, channels] = MhcAxes::of(s);
  return static_cast<double>(tokens) * static_cast<double>(channels);
}

// An mHC-lite op with what all seven share: the axes, the dtypes (bf16 and fp32), the default and
// edge shapes, verification sampled by token, the validity rule, and a work model whose bytes are
// every tensor moved once; `flops` counts the arithmetic of one case.
inline Op mhc_op(std::string name, std::string description,
                 std::function<std::vector<TensorSpec>(const Shape&, DType)> tensors,
                 std::function<double(const Shape&)> flops, decltype(Op::oracle) oracle,
                 std::string compute_unit = "fp32") {
  auto work = [tensors, flops = std::move(flops)](const Shape& s, DType dtype) {
    return WorkModel{tensor_bytes(tensors(s, dtype), dtype), flops(s)};
  };
  return Op{.name = std::move(name),
            .description = std::move(description),
            .axes = mhc_axes(),
            .dtypes = {DType::fp32, DType::bf16},
            .tensors = std::move(tensors),
            .work = std::move(work),
            .oracle = std::move(oracle),
            .sample_axis = "tokens",
            .compute_unit = std::move(compute_unit),
            .default_shapes = mhc_default_shapes(),
            .edge_shapes = mhc_edge_shapes(),
            .invalid = mhc_invalid};
}

// [T, n, C] in the case dtype, sampled by token.
inline TensorSpec mhc_streams_tensor(std::string name, const Shape& s, Distribution init) {
  const auto [tokens, channels] = MhcAxes::of(s);
  return {.name = std::move(name), .dims = {tokens, kMhcStreams, channels}, .sample_dim = 0,
          .init = init};
}
inline TensorSpec mhc_streams_output(std::string name, const Shape& s, std::optional<Tolerance> tol = {}) {
  const auto [tokens, channels] = MhcAxes::of(s);
  return {.name = std::move(name), .dims = {tokens, kMhcStreams, channels}, .is_output = true,
          .sample_dim = 0, .tolerance = tol};
}
// [T, C] in the case dtype (F, X and their gradients), sampled by token.
inline TensorSpec mhc_token_tensor(std::string name, const Shape& s, Distribution init) {
  const auto [tokens, channels] = MhcAxes::of(s);
  return {.name = std::move(name), .dims = {tokens, channels}, .sample_dim = 0, .init = init};
}
inline TensorSpec mhc_token_output(std::string name, const Shape& s, std::optional<Tolerance> tol = {}) {
  const auto [tokens, channels] = MhcAxes::of(s);
  return {.name = std::move(name), .dims = {tokens, channels}, .is_output = true,
          .sample_dim = 0, .tolerance = tol};
}
// Per-token fp32 coefficients: [T, dims...] (h_pre [T, n], R [T, n, n], Z [T, P], r [T]).
inline TensorSpec mhc_coefficients(std::string name, std::vector<std::int64_t> dims, Distribution init) {
  return {.name = std::move(name), .dims = std::move(dims), .sample_dim = 0, .init = init, .elem = ElemType::fp32};
}
inline TensorSpec mhc_coefficients_output(std::string name, std::vector<std::int64_t> dims,
                                          std::optional<Tolerance> tol = {}) {
  return {.name = std::move(name), .dims = std::move(dims), .is_output = true, .sample_dim = 0,
          .elem = ElemType::fp32, .tolerance = tol};
}

}  // namespace kwb
