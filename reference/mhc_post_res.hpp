// The mHC-lite post-residual map in fp64, per token, shared by the oracles of mhc_post_res_fwd
// and mhc_post_res_bwd (and their CPU tests), so the forward and its gradients are written once.
// One token holds H [n, C], F [C], R [n, n] and h_post [n] (n = kMhcStreams = 4), row-major:
//
//   Hout[i, c]  = sum_j R[i, j] H[j, c] + h_post[i] F[c]
//   dH[j, c]    = sum_i R[i, j] dHout[i, c]          (R^T dHout)
//   dF[c]       = sum_i h_post[i] dHout[i, c]
//   dR[i, j]    = sum_c dHout[i, c] H[j, c]          (dHout H^T)
//   dh_post[i]  = sum_c dHout[i, c] F[c]
#pragma once

#include <cmath>
#include <cstdint>

#include "reference/mhc.hpp"

namespace kwb {

// Hout_abs (optional, n * C values): sum of |term| of each Hout element, its error bound's A.
inline void mhc_post_res_forward(const double* H, const double* F, const double* R, const double* h_post,
                                 std::int64_t C, double* Hout, double* Hout_abs = nullptr) {
  constexpr std::int64_t n = kMhcStreams;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t c = 0; c < C; ++c) {
      double v = h_post[i] * F[c], a = std::fabs(v);
      for (std::int64_t j = 0; j < n; ++j) {
        const double term = R[i * n + j] * H[j * C + c];
        v += term;
        a += std::fabs(term);
      }
      Hout[i * C + c] = v;
      if (Hout_abs) Hout_abs[i * C + c] = a;
    }
}

// dH_abs and dF_abs (optional, like dH and dF): sum of |term| of each element of the stream mixes.
inline void mhc_post_res_backward(const double* H, const double* F, const double* R, const double* h_post,
                                  const double* dHout, std::int64_t C, double* dH, double* dF, double* dR,
                                  double* dh_post, double* dH_abs = nullptr, double* dF_abs = nullptr) {
  constexpr std::int64_t n = kMhcStreams;
  for (std::int64_t c = 0; c < C; ++c) {
    double df = 0, df_abs = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      df += h_post[i] * dHout[i * C + c];
      df_abs += std::fabs(h_post[i] * dHout[i * C + c]);
    }
    dF[c] = df;
    if (dF_abs) dF_abs[c] = df_abs;
    for (std::int64_t j = 0; j < n; ++j) {
      double dh = 0, dh_abs = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        dh += R[i * n + j] * dHout[i * C + c];
        dh_abs += std::fabs(R[i * n + j] * dHout[i * C + c]);
      }
      dH[j * C + c] = dh;
      if (dH_abs) dH_abs[j * C + c] = dh_abs;
    }
  }
  for (std::int64_t i = 0; i < n; ++i) {
    double dp = 0;
    for (std::int64_t c = 0; c < C; ++c) dp += dHout[i * C + c] * F[c];
    dh_post[i] = dp;
    for (std::int64_t j = 0; j < n; ++j) {
      double dr = 0;
      for (std::int64_t c = 0; c < C; ++c) dr += dHout[i * C + c] * H[j * C + c];
      dR[i * n + j] = dr;
    }
  }
}

}  // namespace kwb
