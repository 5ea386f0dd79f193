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

#include <cstdint>

#include "reference/mhc.hpp"

namespace kwb {

inline void mhc_post_res_forward(const double* H, const double* F, const double* R, const double* h_post,
                                 std::int64_t C, double* Hout) {
  constexpr std::int64_t n = kMhcStreams;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t c = 0; c < C; ++c) {
      double v = h_post[i] * F[c];
      for (std::int64_t j = 0; j < n; ++j) v += R[i * n + j] * H[j * C + c];
      Hout[i * C + c] = v;
    }
}

inline void mhc_post_res_backward(const double* H, const double* F, const double* R, const double* h_post,
                                  const double* dHout, std::int64_t C, double* dH, double* dF, double* dR,
                                  double* dh_post) {
  constexpr std::int64_t n = kMhcStreams;
  for (std::int64_t c = 0; c < C; ++c) {
    double df = 0;
    for (std::int64_t i = 0; i < n; ++i) df += h_post[i] * dHout[i * C + c];
    dF[c] = df;
    for (std::int64_t j = 0; j < n; ++j) {
      double dh = 0;
      for (std::int64_t i = 0; i < n; ++i) dh += R[i * n + j] * dHout[i * C + c];
      dH[j * C + c] = dh;
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
