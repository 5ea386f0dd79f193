// The SwiGLU formulas in fp64, shared by the oracles of swiglu_fwd and swiglu_bwd (and their
// CPU tests), so the forward and its gradients are written once.
//
//   sig   = 1 / (1 + exp(-gate))
//   out   = silu(gate) * up = gate * sig * up
//   dgate = dout * up * sig * (1 + gate * (1 - sig))     (d silu / d gate = sig * (1 + gate * (1 - sig)))
//   dup   = dout * silu(gate)
#pragma once

#include <cmath>

#include "harness/catalogue/tolerance.hpp"

namespace kwb {

inline double swiglu_sigmoid(double gate) { return 1.0 / (1.0 + std::exp(-gate)); }

inline double swiglu_forward(double gate, double up) { return gate * swiglu_sigmoid(gate) * up; }

struct SwigluGrads {
  double dgate = 0;
  double dup = 0;
};

inline SwigluGrads swiglu_backward(double gate, double up, double dout) {
  const double sig = swiglu_sigmoid(gate);
  return {dout * up * sig * (1.0 + gate * (1.0 - sig)), dout * gate * sig};
}

// The magnitudes of the error bounds (A of fp32_error_bound, in units of u32) of out, dgate and
// dup for one element, from the kernels' fp32 steps:
//   - sig = 1 / (1 + exp(-gate)) with __expf (2 ulp, and exp2 of -gate log2 e rounded: a relative
//     error ~ |gate| u32) or expf: exp's relative error reaches sig scaled by (1 - sig); the add
//     and the reciprocal one rounding each: rel(sig) <= (1 - sig)(4 + |gate|) + 2;
//   - out = gate sig up and dup = dout gate sig: two products more: |out| (rel(sig) + 2);
//   - dgate = dout up sig (1 + gate (1 - sig)): the factor is a sum that cancels near
//     gate = -1.28 (d silu / d gate = 0), and 1 - sig cancels as sig -> 1, where sig's error
//     is absolute (sig rel(sig)) and gate multiplies it:
//       |dout up sig| ((rel(sig) + 4) (1 + |gate| (1 - sig)) + |gate| sig rel(sig)).
// The eager baselines store an intermediate in the case dtype (silu(gate) for out and dup,
// dout up for dgate): one rounding of it, relative but never finer than fp16's subnormal
// spacing (below 2^-14), times the other factor. Those are the R magnitudes (*_stored).
struct SwigluMagnitudes {
  double out = 0, dgate = 0, dup = 0;
  double out_stored = 0, dgate_stored = 0, dup_stored = 0;
};


inline SwigluMagnitudes swiglu_magnitudes(double gate, double up, double dout) {
  const double sig = swiglu_sigmoid(gate), ag = std::fabs(gate);
  const double rel_sig = (1 - sig) * (4 + ag) + 2;
  const double silu = std::fabs(gate * sig);
  SwigluMagnitudes m;
  m.out = silu * std::fabs(up) * (rel_sig + 2);
  m.dup = silu * std::fabs(dout) * (rel_sig + 2);
  m.dgate = std::fabs(dout * up * sig) * ((rel_sig + 4) * (1 + ag * (1 - sig)) + ag * sig * rel_sig);
  const double silu_stored = stored_magnitude(silu);
  m.out_stored = std::fabs(up) * silu_stored;
  m.dup_stored = std::fabs(dout) * silu_stored;
  m.dgate_stored = std::fabs(sig * (1 + gate * (1 - sig))) * stored_magnitude(dout * up);
  return m;
}

}  // namespace kwb
