// Constants and host arithmetic of the qk_norm_fwd / qk_norm_bwd contracts, shared by the
// oracles, the CPU tests and the kernels.
//
// Per head vector x of head_dim elements (one token, one head, of Q or of K):
//   r = 1 / sqrt(sum_d x[d]^2 + eps),   y[d] = x[d] * r * w[d]
// an L2 normalisation (the sum, not the mean: the head vector gets unit length before the
// learned per-dim scale w). Its gradients, with g = dy * w and xhat = x * r:
//   dx[d] = r * (g[d] - xhat[d] * sum_e g[e] * xhat[e]),   dw[d] = sum over head vectors of dy[d] * xhat[d]
#pragma once

#include <algorithm>
#include <cstdint>

#include "harness/catalogue/types.hpp"

namespace kwb {
inline constexpr double kQkNormEps = 1e-6;

// Q and K shape of one case: q [tokens, heads, head_dim], k [tokens, kv_heads, head_dim]. The
// axes read once: const QkNormDims d = QkNormDims::of(a.shape).
struct QkNormDims {
  std::int64_t tokens, heads, kv_heads, head_dim;
  static QkNormDims of(const Shape& s) { return {s.at("tokens"), s.at("heads"), s.at("kv_heads"), s.at("head_dim")}; }
  std::int64_t q_vectors() const { return tokens * heads; }
  std::int64_t k_vectors() const { return tokens * kv_heads; }
  std::int64_t max_vectors() const { return tokens * std::max(heads, kv_heads); }  // of the larger tensor
};
}  // namespace kwb
