// linear_cross_entropy: the language-model head and its loss in one op, forward and backward,
// in fp64, shared by the registered oracle and its CPU tests.
//
// Inputs h [N, D] (hidden states), W [V, D] (the lm_head weight, nn.Linear layout), labels [N].
//   z[n, v]  = sum_d h[n, d] W[v, d]                          (the logits, never stored whole)
//   lse[n]   = log sum_v exp(z[n, v])
//   loss[n]  = lse[n] - z[n, labels[n]]                      (0 for an ignored token)
//   dl[n, v] = exp(z[n, v] - lse[n]) - [v == labels[n]]      (0 rows for ignored tokens)
//   dh       = dl @ W                 [N, D]
//   dW       = dl^T @ h               [V, D]
// The gradients are of L = sum_n loss[n] (reduction='sum'): each vocabulary row of dW then depends
// on that class alone (given every logit), so dW is checkable on a sample of its rows; the mean of
// PyTorch's default is this times 1 / n_valid, a scalar a caller folds into the GEMMs' alpha.
// A token is ignored when its label is outside [0, V) (-100 is PyTorch's ignore_index).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "harness/catalogue/registry.hpp"

namespace kwb {

// The axes of a linear_cross_entropy case, read once: const auto [tokens, hidden, vocab] = LceAxes::of(s).
struct LceAxes {
  std::int64_t tokens = 0;  // N
  std::int64_t hidden = 0;  // D
  std::int64_t vocab = 0;   // V
  static LceAxes of(const Shape& s) { return {s.at("tokens"), s.at("hidden"), s.at("vocab")}; }
};

inline Shape lce_shape(std::int64_t tokens, std::int64_t hidden, std::int64_t vocab) {
  return Shape{{{"tokens", tokens}, {"hidden", hidden}, {"vocab", vocab}}};
}

// The inputs' spreads (linear_cross_entropy.cpp draws them; the fp16 bounds below scale with them):
// h ~ N(0, 1), a normalised hidden state; W ~ N(0, 1 / sqrt(D)), so the logits are ~N(0, 1).
inline constexpr double kLceHiddenStddev = 1.0;
inline double lce_weight_stddev(std::int64_t hidden) { return 1.0 / std::sqrt(static_cast<double>(hidden)); }

// One token's loss and gradient row from its logits row z (V values): writes dl (V values,
// zeros when ignored) and returns the loss (0 when ignored).
double lce_token_grad(const double* z, std::int64_t vocab, long long label, double* dl);

// What the error bounds of the outputs scale with (harness/catalogue/tolerance.hpp), per element,
// each an array of the output's size:
//   dh[n, d]: the terms dl[n, v] W[v, d] over v;  dW[v, d]: the terms dl[n, v] h[n, d] over n;
//   loss[n]:  its first-order error is sum_v dl[n, v] dz[n, v] (dz: a logit's error), so its
//             "terms" are the logits as they reach it: abs = sum_v |dl z|, and rss over the
//             logits' own terms, sqrt(sum_v dl^2 sum_d (h[n, d] W[v, d])^2).
// abs_* get sum |term|, rss_* get sqrt(sum term^2).
struct LceMagnitudes {
  double* loss_abs = nullptr;
  double* loss_rss = nullptr;
  double* dh_abs = nullptr;
  double* dh_rss = nullptr;
  double* dw_abs = nullptr;
  double* dw_rss = nullptr;
};

// The oracle: loss [N], dh [N, D], dW [V, D] from h [N, D], W [V, D], labels [N], all row-major
// fp64. Chunked over tokens (the logits of one chunk at a time, as the fused kernel) and threaded
// through ref::matmul_fp64; `chunk_tokens` 0 picks a chunk of about 256 MB of logits. With
// `magnitudes`, their arrays are filled in the same pass.
// dw_rows (sorted vocabulary rows): dW and its magnitudes at those rows alone ([rows, D]); null: every row.
void lce_reference(std::int64_t tokens, std::int64_t hidden, std::int64_t vocab, const double* h,
                   const double* w, const double* labels, double* loss, double* dh, double* dw,
                   std::int64_t chunk_tokens = 0, const LceMagnitudes* magnitudes = nullptr,
                   const std::vector<std::int64_t>* dw_rows = nullptr);

// Per-output tolerances of a case (see linear_cross_entropy.cpp for the derivation).
struct LceTolerances {
  Tolerance loss, dh, dw;
};
LceTolerances lce_tolerances(const Shape& shape, DType dtype);

}  // namespace kwb
