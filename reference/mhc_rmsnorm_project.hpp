// The mHC-lite RMSNorm + projection formulas in fp64, per token, shared by the oracles of
// mhc_rmsnorm_project_fwd and mhc_rmsnorm_project_bwd_dx and by their CPU tests.
//
// With K = n * C the flattened length of one token's streams h = H[t] (K values) and W [K, P]:
//   r    = 1 / sqrt(sum_k h_k^2 / K + eps)
//   Z_p  = r * sum_k h_k W[k, p]                       (= (r h) @ W)
// Backward, given dZ (P values) and the forward's r:
//   g_k  = sum_p dZ_p W[k, p]                          (= dZ @ W^T)
//   s    = sum_k h_k g_k
//   dh_k = r g_k - (r^3 / K) s h_k
// (dZ.Z = r (h.g); d r / d h_k = -r^3 h_k / K, so d(dZ.Z)/dh_k = r g_k + (h.g) (-r^3 h_k / K).)
#pragma once

#include <cmath>
#include <cstdint>

#include "reference/mhc.hpp"

namespace kwb {

// r and Z of one token: h is K values, w is [K, P] row-major, z receives P values. z_rss
// (optional, P values) receives the root-sum-square of Z_p's terms, r sqrt(sum_k (h_k W[k, p])^2):
// the R of its error bound.
inline double mhc_rmsnorm_project_token(const double* h, const double* w, double* z, std::int64_t k_len,
                                        std::int64_t p_len = kMhcProjectWidth, double* z_rss = nullptr) {
  double sum_sq = 0;
  for (std::int64_t k = 0; k < k_len; ++k) sum_sq += h[k] * h[k];
  const double r = 1.0 / std::sqrt(sum_sq / static_cast<double>(k_len) + kMhcRmsEps);
  for (std::int64_t p = 0; p < p_len; ++p) z[p] = 0;
  if (z_rss)
    for (std::int64_t p = 0; p < p_len; ++p) z_rss[p] = 0;
  for (std::int64_t k = 0; k < k_len; ++k)
    for (std::int64_t p = 0; p < p_len; ++p) {
      const double term = h[k] * w[k * p_len + p];
      z[p] += term;
      if (z_rss) z_rss[p] += term * term;
    }
  for (std::int64_t p = 0; p < p_len; ++p) z[p] *= r;
  if (z_rss)
    for (std::int64_t p = 0; p < p_len; ++p) z_rss[p] = r * std::sqrt(z_rss[p]);
  return r;
}

// dh of one token from h, w, the forward's r and dz (P values); dh receives K values. dh_abs
// (optional, K values) receives the magnitudes of dh's terms, r sum_p |dz_p w[k, p]| +
// (r^3 / K) |h_k| sum_j |h_j g_j|: the A of its error bound.
inline void mhc_rmsnorm_project_token_grad(const double* h, const double* w, double r, const double* dz, double* dh,
                                           std::int64_t k_len, std::int64_t p_len = kMhcProjectWidth,
                                           double* dh_abs = nullptr) {
  double s = 0, s_abs = 0;
  for (std::int64_t k = 0; k < k_len; ++k) {
    double g = 0, g_abs = 0;
    for (std::int64_t p = 0; p < p_len; ++p) {
      g += dz[p] * w[k * p_len + p];
      g_abs += std::fabs(dz[p] * w[k * p_len + p]);
    }
    dh[k] = r * g;  // first term; the second needs s, known after the loop
    if (dh_abs) dh_abs[k] = std::fabs(r) * g_abs;
    s += h[k] * g;
    s_abs += std::fabs(h[k] * g);
  }
  const double coef = r * r * r * s / static_cast<double>(k_len);
  const double coef_abs = std::fabs(r * r * r) * s_abs / static_cast<double>(k_len);
  for (std::int64_t k = 0; k < k_len; ++k) {
    dh[k] -= coef * h[k];
    if (dh_abs) dh_abs[k] += coef_abs * std::fabs(h[k]);
  }
}

}  // namespace kwb
