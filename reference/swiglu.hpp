// The SwiGLU formulas in fp64, shared by the oracles of swiglu_fwd and swiglu_bwd (and their
// CPU tests), so the forward and its gradients are written once.
//
//   sig   = 1 / (1 + exp(-gate))
//   out   = silu(gate) * up = gate * sig * up
//   dgate = dout * up * sig * (1 + gate * (1 - sig))     (d silu / d gate = sig * (1 + gate * (1 - sig)))
//   dup   = dout * silu(gate)
#pragma once

#include <cmath>

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

}  // namespace kwb
