// What the newton_schulz variants share on the device: the deterministic sum of squares of G,
// the normalisation, and workspace carving. The GEMM plans are in ns_plans.hpp (host-only, so
// that a CPU test can replay them).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "harness/catalogue/device_types.cuh"
#include "harness/catalogue/types.hpp"
#include "kernels/common/align_up.hpp"
#include "kernels/common/block_reduce.cuh"
#include "kernels/common/cublaslt_matmul.cuh"
#include "kernels/newton_schulz/ns_plans.hpp"
#include "reference/newton_schulz.hpp"

namespace kwb::ns {

// Deterministic ||G||_F^2 in two stages: kNormParts blocks each leave the fp32 sum of squares of
// a fixed grid-stride slice; the consumer sums the partials in a fixed order. No atomics: two
// runs give the same bits.
inline constexpr int kNormParts = 1024, kNormThreads = 256;

template <class T>
__global__ void sum_squares_partials(const T* __restrict__ g, std::int64_t count, float* __restrict__ partials) {
  __shared__ float scratch[32];
  float sum = 0;
  for (std::int64_t i = blockIdx.x * std::int64_t{kNormThreads} + threadIdx.x; i < count;
       i += std::int64_t{kNormParts} * kNormThreads) {
    const float v = to_float(g[i]);
    sum += v * v;
  }
  sum = block_sum(sum, scratch);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

template <class T>
void launch_sum_squares(const T* g, std::int64_t count, float* partials, cudaStream_t stream) {
  sum_squares_partials<<<kNormParts, kNormThreads, 0, stream>>>(g, count, partials);
}

// The total of the partials, the same bits in every warp that calls it (fixed lane slices, then
// a fixed butterfly).
__device__ __forceinline__ float sum_partials_in_warp(const float* partials) {
  float s = 0;
  for (int p = threadIdx.x & 31; p < kNormParts; p += 32) s += partials[p];
  return warp_sum(s);
}

// X0 = G / (||G||_F + eps) in X's layout, from the partials: warp 0 of each block sums them (the
// same bits in every block), then the block scales a grid-stride slice.
template <class T>
__global__ void scale_by_inverse_norm(const T* __restrict__ g, const float* __restrict__ partials,
                                      std::int64_t count, float eps, T* __restrict__ x0) {
  __shared__ float inv;
  if (threadIdx.x < 32) {
    const float total = sum_partials_in_warp(partials);
    if (threadIdx.x == 0) inv = 1.0f / (sqrtf(total) + eps);
  }
  __syncthreads();
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::int64_t{gridDim.x} * blockDim.x)
    x0[i] = from_float<T>(to_float(g[i]) * inv);
}

template <class T>
void launch_scale_by_inverse_norm(const T* g, const float* partials, std::int64_t count, T* x0,
                                  cudaStream_t stream) {
  const float eps = static_cast<float>(kNsEps);
  const unsigned blocks = static_cast<unsigned>(std::min<std::int64_t>((count + 255) / 256, 1024));
  scale_by_inverse_norm<<<blocks, 256, 0, stream>>>(g, partials, count, eps, x0);
}

// Workspace carving: regions aligned to 256 bytes (cuBLASLt wants 16), in order.

struct Carver {
  std::size_t used = 0;
  std::size_t take(std::size_t bytes) {
    const std::size_t at = used;
    used += align_up(bytes);
    return at;
  }
};

// The fused variants' workspace: cuBLASLt's share, the norm's partials, A and B (r x r) and the
// second X buffer of the ping-pong (m x n), at byte offsets from the workspace's start.
struct FusedLayout {
  std::size_t partials, a, b, x, total;
};
inline FusedLayout fused_layout(const Dims& d, DType dtype) {
  const std::size_t e = dtype_size(dtype);
  Carver w;
  FusedLayout l{};
  w.take(kLtWorkspaceBytes);
  l.partials = w.take(kNormParts * sizeof(float));
  l.a = w.take(d.r * d.r * e);
  l.b = w.take(d.r * d.r * e);
  l.x = w.take(d.m * d.n * e);
  l.total = w.used;
  return l;
}

}  // namespace kwb::ns
