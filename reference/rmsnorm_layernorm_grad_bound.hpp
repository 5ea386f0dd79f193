// The error bound of the row-normalisation gradients (rmsnorm_bwd, layernorm_bwd): the term
// magnitudes their oracles give the verifier (HostTensor::abs_sum, root_sum_sq), per row.
//
// Per row (K = cols, r = rstd, xhat = (x - mean) r, g = w dy; RMSNorm: mean = 0):
//   dx_i = r g_i - r mean(g) - r xhat_i mean(g xhat)        (RMSNorm: no mean(g) term)
// In real arithmetic these terms can cancel to nothing: at cols = 1, LayerNorm's xhat = 0 and
// dx = r (g - g) = 0 with r = 1/sqrt(eps) ~ 316; RMSNorm's dx = r g (1 - xhat^2) with xhat^2 -> 1
// and r up to 1/sqrt(eps) = 1000 as x -> 0. An fp32 kernel leaves a residue of its roundings of
// the terms (an fma of w dy against a rounded w dy: u32 r |g|), so the bound must scale with the
// terms, not with dx. What reaches dx_i, in units of u32 (fp32_error_bound's c u32 A):
//   - each term's own roundings and the relative error of r (rsqrtf: 2 ulp; it enters the terms
//     as r, r and r^3), and the fp32 row sums mean(g), mean(g xhat), mean((x - mean)^2), whose
//     errors grow like sqrt(K):                 (1 + sqrt K) r (|g_i| + mean|g| + 3 |xhat_i| mean|g
//     xhat|)
//   - LayerNorm: the row mean's error (~ sqrt(K) u32 mean|x|) moves every xhat by r times that,
//     which moves dx_i by r^2 (mean(g xhat) + xhat_i mean(g)) per unit:
//                                               sqrt(K) r mean|x| r (mean|g xhat| + |xhat_i|
//                                               mean|g|)
// mean|.| (of the magnitudes) stands for |mean(.)|: the row sums' errors scale with their terms.
// A variant that rounds g to the storage type before summing (rmsnorm_bwd's eager baseline keeps
// w dy in bf16, as PyTorch's MulBackward does) adds independent errors u_s |g_k| to each term:
//   R_i = r sqrt(g_i^2 + sum_k g_k^2 / K^2 + xhat_i^2 sum_k (g_k xhat_k)^2 / K^2)
//
// dweight_c = sum over rows of dy xhat (fp32): the sum's own roundings, whose error is about u32
// times the sum of |terms| for terms of random sign, and each term's xhat error from its row's
// statistics (independent between rows: a root-sum-square, sqrt(K) u32 times the term):
//   A_c = sum_r |dy| (|xhat| + r mean|x|)          R_c = sqrt(sum_r (sqrt(K) |dy| (|xhat| + r
//   mean|x|))^2)
// (RMSNorm: no mean|x| term). dbias_c = sum over rows of dy: A_c = sum_r |dy| (inputs are exact).
#pragma once

#include <cmath>
#include <cstdint>

namespace kwb::norm_grad_bound {

// One row's statistics and the magnitudes the bound needs. centred: LayerNorm.
struct RowMagnitudes {
  double rstd = 0, mean = 0;
  double mean_abs_g = 0;      // mean |g|       (LayerNorm's mean(g) term; 0 for RMSNorm)
  double mean_abs_gxhat = 0;  // mean |g xhat|
  double mean_abs_x = 0;      // mean |x|       (LayerNorm's mean; 0 for RMSNorm)
  double sum_g_sq = 0;        // sum g^2        (LayerNorm only)
  double sum_gxhat_sq = 0;    // sum (g xhat)^2
};

inline RowMagnitudes row_magnitudes(const double* x, const double* w, const double* dy,
                                    std::int64_t cols, double mean, double rstd, bool centred) {
  RowMagnitudes m;
  m.rstd = rstd;
  m.mean = mean;
  for (std::int64_t c = 0; c < cols; ++c) {
    const double g = w[c] * dy[c], gx = g * (x[c] - mean) * rstd;
    m.mean_abs_gxhat += std::fabs(gx);
    m.sum_gxhat_sq += gx * gx;
    if (centred) {
      m.mean_abs_g += std::fabs(g);
      m.mean_abs_x += std::fabs(x[c]);
      m.sum_g_sq += g * g;
    }
  }
  const double n = static_cast<double>(cols);
  m.mean_abs_g /= n;
  m.mean_abs_gxhat /= n;
  m.mean_abs_x /= n;
  return m;
}

// dx_i's A and R (see the file comment).
struct Magnitude {
  double abs_sum = 0, root_sum_sq = 0;
};
inline Magnitude dx_magnitude(const RowMagnitudes& m, double x, double w, double dy,
                              std::int64_t cols) {
  const double n = static_cast<double>(cols), sqrt_k = std::sqrt(n), r = m.rstd;
  const double g = w * dy, xhat = (x - m.mean) * r;
  Magnitude out;
  out.abs_sum =
      (1 + sqrt_k) * r * (std::fabs(g) + m.mean_abs_g + 3 * std::fabs(xhat) * m.mean_abs_gxhat) +
      sqrt_k * r * m.mean_abs_x * r * (m.mean_abs_gxhat + std::fabs(xhat) * m.mean_abs_g);
  out.root_sum_sq =
      r * std::sqrt(g * g + m.sum_g_sq / (n * n) + xhat * xhat * m.sum_gxhat_sq / (n * n));
  return out;
}

// One row's share of dweight_c's A and R^2 (summed over rows by the caller; R = sqrt of the sum).
inline void add_dweight_terms(const RowMagnitudes& m, double x, double dy, std::int64_t cols,
                              double& abs_sum, double& sum_sq) {
  const double xhat = (x - m.mean) * m.rstd;
  const double term = std::fabs(dy) * (std::fabs(xhat) + m.rstd * m.mean_abs_x);
  abs_sum += term;
  sum_sq += static_cast<double>(cols) * term * term;
}

}  // namespace kwb::norm_grad_bound
