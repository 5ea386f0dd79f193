// mean_pooling_fwd and mean_pooling_bwd: the masked mean over the sequence that turns a batch of
// token embeddings [batch, seq, hidden] into one vector per sequence (sentence embeddings; the
// pooling of the fifth stack's encoders), and its gradient.
//
//   n_b      = sum_s mask[b, s]                       (the sequence's real tokens)
//   y[b, c]  = sum_s mask[b, s] x[b, s, c] / max(n_b, 1)
//   dx[b, s, c] = mask[b, s] dy[b, c] / max(n_b, 1)
//
// A sequence with no real token pools to 0 (and passes no gradient): max(n, 1) where the
// sentence-transformers code clamps the count at 1e-9, which fp16 cannot hold (it rounds to 0 and
// 0 / 0 is NaN). The formulas, in fp64, are shared by the oracles and their CPU tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "harness/catalogue/types.hpp"

namespace kwb {

// The axes of a case, read once: auto [batch, seq, hidden] = PoolingAxes::of(shape).
struct PoolingAxes {
  std::int64_t batch = 0, seq = 0, hidden = 0;
  static PoolingAxes of(const Shape& s) { return {s.at("batch"), s.at("seq"), s.at("hidden")}; }
};

// The fraction of tokens the generated mask keeps (Distribution::mask): three in four, a batch
// padded by a quarter on average. The work model counts the x rows a kernel must read at this
// fraction: a kernel need not read a token the mask drops.
inline constexpr double kPoolingKeptFraction = 0.75;

// y (and per element the sum of |terms| / n, the A of its error bound) from x and the mask, all
// row-major; mask values are 0 or 1.
void mean_pool_forward(const PoolingAxes& a, const double* x, const double* mask, double* y, double* y_abs_sum);
void mean_pool_backward(const PoolingAxes& a, const double* dy, const double* mask, double* dx);
// The same at `positions` of the sequence alone (sorted; dx holds [batch, positions, hidden]): the
// mask is whole (its counts run over every position of a.seq), as is dy.
void mean_pool_backward_at(const PoolingAxes& a, const double* dy, const double* mask,
                           const std::vector<std::int64_t>& positions, double* dx);

}  // namespace kwb
