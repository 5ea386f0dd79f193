// swiglu_mlp_fwd in fp64, shared by the op's oracle and its CPU tests: a LLaMA-style MLP with
// the nn.Linear weight layout ([out, in], no biases), all row-major:
//
//   g = x Wg^T,  u = x Wu^T      x [m, d], Wg and Wu [f, d]  ->  g, u [m, f]
//   h = silu(g) * u              (reference/swiglu.hpp's swiglu_forward)
//   y = h Wd^T                   Wd [d, f]                   ->  y [m, d]
//
// h stays in fp64 here: the oracle is the exact math, and the tolerance carries the rounding of
// h (and of g and u) that every implementation stores in the case dtype (see swiglu_mlp.cpp).
#pragma once

#include <cstdint>

#include "harness/catalogue/types.hpp"

namespace kwb {

// The axes of a swiglu_mlp_fwd case, read once: const auto [m, d, f] = SwigluMlpAxes::of(a.shape).
struct SwigluMlpAxes {
  std::int64_t m = 0;  // tokens (rows of x and y)
  std::int64_t d = 0;  // model dim
  std::int64_t f = 0;  // hidden dim
  static SwigluMlpAxes of(const Shape& s) { return {s.at("m"), s.at("d"), s.at("f")}; }
};

inline Shape swiglu_mlp_shape(std::int64_t m, std::int64_t d, std::int64_t f) {
  return Shape{{{"m", m}, {"d", d}, {"f", f}}};
}

// With abs_sum and root_sum_sq (both or neither, m x d each): per output the magnitudes of the
// down projection's f terms h[i, j] Wd[c, j] (what the op's error bound scales with).
void swiglu_mlp_fp64(std::int64_t m, std::int64_t d, std::int64_t f, const double* x, const double* wg,
                     const double* wu, const double* wd, double* y, double* abs_sum = nullptr,
                     double* root_sum_sq = nullptr);

}  // namespace kwb
