// The mHC-lite pre-map formulas in fp64, shared by the oracles of mhc_pre_map_fwd,
// mhc_pre_map_bwd_dx and mhc_pre_map_bwd_hpre and by their CPU tests, so the forward and its two
// gradients are written once. n = kMhcStreams = 4 streams of C channels per token; row-major
// H [T, n, C], h_pre [T, n], X [T, C].
//
//   X[t, c]       = sum_i h_pre[t, i] * H[t, i, c]     (the layer's input: a mix of the streams)
//   dH[t, i, c]   = h_pre[t, i] * dX[t, c]             (d L / d H for L = sum(dX * X))
//   dh_pre[t, i]  = sum_c H[t, i, c] * dX[t, c]        (d L / d h_pre)
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "reference/mhc.hpp"

namespace kwb {

// X, and optionally sum_i |h_pre[t, i] * H[t, i, c]| per element (X's error bound, resized here).
inline void mhc_pre_map_forward(const std::vector<double>& H, const std::vector<double>& h_pre, std::int64_t tokens,
                                std::int64_t channels, std::vector<double>& X, std::vector<double>* X_abs_sum = nullptr) {
  constexpr std::int64_t n = kMhcStreams;
  if (X_abs_sum) X_abs_sum->assign(X.size(), 0.0);
  for (std::int64_t t = 0; t < tokens; ++t)
    for (std::int64_t c = 0; c < channels; ++c) {
      double sum = 0, abs_sum = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        const double term = h_pre[t * n + i] * H[(t * n + i) * channels + c];
        sum += term;
        abs_sum += std::fabs(term);
      }
      X[t * channels + c] = sum;
      if (X_abs_sum) (*X_abs_sum)[t * channels + c] = abs_sum;
    }
}

inline void mhc_pre_map_backward_dx(const std::vector<double>& h_pre, const std::vector<double>& dX,
                                    std::int64_t tokens, std::int64_t channels, std::vector<double>& dH) {
  constexpr std::int64_t n = kMhcStreams;
  for (std::int64_t t = 0; t < tokens; ++t)
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t c = 0; c < channels; ++c)
        dH[(t * n + i) * channels + c] = h_pre[t * n + i] * dX[t * channels + c];
}

inline void mhc_pre_map_backward_hpre(const std::vector<double>& H, const std::vector<double>& dX,
                                      std::int64_t tokens, std::int64_t channels, std::vector<double>& dh_pre) {
  constexpr std::int64_t n = kMhcStreams;
  for (std::int64_t t = 0; t < tokens; ++t)
    for (std::int64_t i = 0; i < n; ++i) {
      double sum = 0;
      for (std::int64_t c = 0; c < channels; ++c) sum += H[(t * n + i) * channels + c] * dX[t * channels + c];
      dh_pre[t * n + i] = sum;
    }
}

}  // namespace kwb
