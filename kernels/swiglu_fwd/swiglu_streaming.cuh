// The SwiGLU math of the fused kernels (forward and backward), and the launch that streams an
// op's tensors through it (kernels/common/streaming_map.cuh), shared by every fused variant of
// swiglu_fwd and swiglu_bwd so that variants differ only in what their names say.
//
// fp32 math with the fast intrinsics: sig = __frcp_rn(1 + __expf(-gate)). __expf is within a
// few ulp for |gate| < 20 (about 1e-6 relative, under fp32's 1e-5 tolerance); the reciprocal
// is exact, so a saturated exp (inf, gate < -88) gives sig = 0, never NaN.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "harness/catalogue/device_types.cuh"
#include "harness/catalogue/registry.hpp"
#include "kernels/common/streaming_map.cuh"

namespace kwb {

__device__ __forceinline__ float swiglu_fast_sigmoid(float gate) { return __frcp_rn(1.0f + __expf(-gate)); }

// in: gate, up; out: silu(gate) * up.
struct SwigluForwardMath {
  __device__ __forceinline__ void operator()(const float* in, float* out) const {
    const float gate = in[0], up = in[1];
    out[0] = gate * swiglu_fast_sigmoid(gate) * up;
  }
};

// in: gate, up, dout; out: dgate, dup.
struct SwigluBackwardMath {
  __device__ __forceinline__ void operator()(const float* in, float* out) const {
    const float gate = in[0], up = in[1], dout = in[2];
    const float sig = swiglu_fast_sigmoid(gate);
    out[0] = dout * up * sig * (1.0f + gate * (1.0f - sig));  // dgate
    out[1] = dout * (gate * sig);                              // dup
  }
};

// The case's first NIn tensors are the inputs, the next NOut the outputs, all [rows, cols]
// and contiguous: streamed as flat arrays with the "packs" and "waves" tunables.
template <class Access, int NIn, int NOut, class Math>
void launch_swiglu_streaming(const LaunchArgs& a, Math math) {
  const std::int64_t n = a.shape.at("rows") * a.shape.at("cols");
  const int packs = static_cast<int>(a.tunable("packs"));
  const int waves = static_cast<int>(a.tunable("waves"));
  dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    StreamTensors<T, NIn, NOut> t{};
    for (int k = 0; k < NIn; ++k) t.in[k] = static_cast<const T*>(a.tensors[k]);
    for (int k = 0; k < NOut; ++k) t.out[k] = static_cast<T*>(a.tensors[NIn + k]);
    switch (packs) {
      case 1: streaming_map<T, 1, Access>(t, n, waves, a.stream, math); break;
      case 4: streaming_map<T, 4, Access>(t, n, waves, a.stream, math); break;
      default: streaming_map<T, 2, Access>(t, n, waves, a.stream, math); break;
    }
  });
}

// The tunables every streaming variant declares (the first value of each is the default).
inline std::vector<Tunable> swiglu_streaming_tunables() {
  // Defaults from a sweep on an H100 (bf16 16384x7168): packs=1 waves=64 read 99.9% of the copy
  // ceiling forward and 99.1% backward, against 93-94% at packs=2 waves=1 (docs/performance.md).
  return {{"packs", {1, 2, 4}, "16-byte packs per tensor per thread per grid step"},
          {"waves", {64, 1, 4}, "grid size in waves of resident blocks (at most; never more than the work)"}};
}

// The Variant of a streaming SwiGLU kernel: Access picks the loads and stores, the first NIn
// tensors are read and the next NOut written through Math; the name and description say what
// the variant changes.
template <class Access, int NIn, int NOut, class Math>
Variant swiglu_streaming_variant(std::string op, std::string name, std::string description) {
  return Variant{
      .op = std::move(op),
      .name = std::move(name),
      .role = Role::fused,
      .description = std::move(description),
      .launch = [](const LaunchArgs& a) { launch_swiglu_streaming<Access, NIn, NOut>(a, Math{}); },
      .refuse = {},
      .workspace_bytes = {},
      .tunables = swiglu_streaming_tunables(),
  };
}

}  // namespace kwb
