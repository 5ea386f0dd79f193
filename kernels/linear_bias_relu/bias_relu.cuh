// What the linear_bias_relu kernels share: the output y = max(0, acc + b[col]) rounded once to
// the case dtype, as the epilogue functor of the mma.sync mainloop (kernels/common/mma_gemm.cuh)
// and as a scalar for the CUDA-core kernels, and the case's tensors.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "harness/catalogue/typed_launch.cuh"
#include "reference/linear_bias_relu.hpp"

namespace kwb {

template <class T>
__device__ __forceinline__ T bias_relu(float acc, T bias) {
  return from_float<T>(fmaxf(acc + to_float(bias), 0.0f));
}

// Two adjacent outputs in one 4- (16-bit) or 8-byte (fp32) store; `out` must be aligned to it.
template <class T>
__device__ __forceinline__ void store_pair(T* out, T v0, T v1) {
  if constexpr (std::is_same_v<T, float>) {
    *reinterpret_cast<float2*>(out) = make_float2(v0, v1);
  } else if constexpr (std::is_same_v<T, __half>) {
    *reinterpret_cast<__half2*>(out) = __halves2half2(v0, v1);
  } else {
    *reinterpret_cast<__nv_bfloat162*>(out) = __halves2bfloat162(v0, v1);
  }
}

// The mma mainloop's epilogue: C[row, col .. col + 1] -> y. Pairs are stored together when n is
// even (then row * n + col is even: the pair is aligned); col + 1 == n is never written.
template <class T>
struct BiasReluEpilogue {
  const T* bias;
  T* y;
  std::int64_t n;

  __device__ __forceinline__ void operator()(std::int64_t row, std::int64_t col, float v0, float v1) const {
    T* out = y + row * n + col;
    const T r0 = bias_relu(v0, bias[col]);
    if (col + 1 >= n) {
      out[0] = r0;
      return;
    }
    const T r1 = bias_relu(v1, bias[col + 1]);
    if (n % 2 == 0) {
      store_pair(out, r0, r1);
    } else {
      out[0] = r0;
      out[1] = r1;
    }
  }
};

// The Hopper GEMM's element-wise epilogue (kernels/common/hopper/gemm_tn.cuh): acc -> the value
// before rounding; columns past n (clipped by the store) read no bias.
template <class T>
struct BiasRelu {
  const T* bias;
  std::int64_t n;
  __device__ __forceinline__ float operator()(std::int64_t col, float acc) const {
    return fmaxf(acc + (col < n ? to_float(bias[col]) : 0.0f), 0.0f);
  }
};

// The case's tensors and axes: x [m, k], W [n, k], b [n], y [m, n] (a kernel argument, by value).
template <class T>
struct LinearArgs {
  const T* x;
  const T* w;
  const T* b;
  T* y;
  std::int64_t m, n, k;
};

template <class T>
LinearArgs<T> linear_args(const LaunchArgs& a) {
  const auto [m, n, k] = LinearAxes::of(a.shape);
  return {a.tensor<const T>("x"), a.tensor<const T>("W"), a.tensor<const T>("b"), a.tensor<T>("y"), m, n, k};
}

}  // namespace kwb
