// The SwiGLU math of the fused kernels (forward and backward), and the launch that streams an
// op's tensors through it (kernels/common/streaming_map.cuh), shared by every fused variant of
// swiglu_fwd and swiglu_bwd so that variants differ only in what their names say.
//
// fp32 math with the fast intrinsics: sig = __frcp_rn(1 + __expf(-gate)). __expf is within a
// few ulp for |gate| < 20 (about 1e-6 relative, under fp32's 1e-5 tolerance); the reciprocal
// is exact, so a saturated exp (inf, gate < -88) gives sig = 0, never NaN.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/streaming_map.cuh"
#include "reference/rows_cols_op.hpp"

namespace kwb {

__device__ __forceinline__ float swiglu_fast_sigmoid(float gate) { return __frcp_rn(1.0f + __expf(-gate)); }

// in: gate, up; out: silu(gate) * up. The tensors by the op's names (reference/swiglu.cpp), in
// the order of in and out.
struct SwigluForwardMath {
  static constexpr std::array<std::string_view, 2> kInputs{"gate", "up"};
  static constexpr std::array<std::string_view, 1> kOutputs{"out"};
  __device__ __forceinline__ void operator()(const float* in, float* out) const {
    const float gate = in[0], up = in[1];
    out[0] = gate * swiglu_fast_sigmoid(gate) * up;
  }
};

// in: gate, up, dout; out: dgate, dup.
struct SwigluBackwardMath {
  static constexpr std::array<std::string_view, 3> kInputs{"gate", "up", "dout"};
  static constexpr std::array<std::string_view, 2> kOutputs{"dgate", "dup"};
  __device__ __forceinline__ void operator()(const float* in, float* out) const {
    const float gate = in[0], up = in[1], dout = in[2];
    const float sig = swiglu_fast_sigmoid(gate);
    out[0] = dout * up * sig * (1.0f + gate * (1.0f - sig));  // dgate
    out[1] = dout * (gate * sig);                              // dup
  }
};

// Math's inputs and outputs, all [rows, cols] and contiguous, streamed as flat arrays with the
// "packs" and "waves" tunables.
template <class T, class Access, class Math>
void launch_swiglu_streaming(const LaunchArgs& a) {
  const auto [rows, cols] = RowsCols::of(a.shape);
  const std::int64_t n = rows * cols;
  const int packs = static_cast<int>(a.tunable("packs"));
  const int waves = static_cast<int>(a.tunable("waves"));
  StreamTensors<T, Math::kInputs.size(), Math::kOutputs.size()> t{};
  for (std::size_t k = 0; k < Math::kInputs.size(); ++k) t.in[k] = a.tensor<const T>(Math::kInputs[k]);
  for (std::size_t k = 0; k < Math::kOutputs.size(); ++k) t.out[k] = a.tensor<T>(Math::kOutputs[k]);
  switch (packs) {
    case 1: streaming_map<T, 1, Access>(t, n, waves, a.stream, Math{}); break;
    case 4: streaming_map<T, 4, Access>(t, n, waves, a.stream, Math{}); break;
    default: streaming_map<T, 2, Access>(t, n, waves, a.stream, Math{}); break;
  }
}

// The tunables every streaming variant declares (the first value of each is the default).
inline std::vector<Tunable> swiglu_streaming_tunables() {
  // Defaults from a sweep on an H100 (bf16 16384x7168): packs=1 waves=64 ran close to the copy
  // ceiling forward and backward, clearly ahead of packs=2 waves=1. Measured: docs/results.md.
  return {{"packs", {1, 2, 4}, "16-byte packs per tensor per thread per grid step"},
          {"waves", {64, 1, 4}, "grid size in waves of resident blocks (at most; never more than the work)"}};
}

// The Variant of a streaming SwiGLU kernel: Access picks the loads and stores, Math's inputs are
// read and its outputs written through it; the name and description say what the variant changes.
template <class Access, class Math>
Variant swiglu_streaming_variant(std::string op, std::string name, std::string description) {
  return Variant{
      .op = std::move(op),
      .name = std::move(name),
      .role = Role::fused,
      .description = std::move(description),
      .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_swiglu_streaming<T, Access, Math>(a); }),
      .refuse = {},
      .workspace_bytes = {},
      .tunables = swiglu_streaming_tunables(),
  };
}

}  // namespace kwb
