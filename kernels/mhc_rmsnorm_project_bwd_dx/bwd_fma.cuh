// The CUDA-core (FMA) kernel of mhc_rmsnorm_project_bwd_dx: one warp per token, two passes
// (fused_v1_warp_per_token_two_pass's header explains it); also fused_v2's fp32 path.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "harness/catalogue/device_types.cuh"
#include "kernels/mhc_rmsnorm_project_fwd/project_fma.cuh"

namespace kwb {

__device__ __forceinline__ float dot_row(const float (&dz)[kProjectP], const float (&wr)[kProjectP]) {
  float g = 0;
#pragma unroll
  for (int p = 0; p < kProjectP; ++p) g = fmaf(dz[p], wr[p], g);
  return g;
}

template <class T>
__global__ void bwd_dx_warp_per_token(const T* __restrict__ h, const T* __restrict__ w, const float* __restrict__ r,
                                      const float* __restrict__ dz, T* __restrict__ dh, std::int64_t tokens,
                                      std::int64_t k_len) {
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t{gridDim.x} * (blockDim.x >> 5);
  for (std::int64_t t = blockIdx.x * std::int64_t{blockDim.x >> 5} + (threadIdx.x >> 5); t < tokens; t += warps) {
    const T* ht = h + t * k_len;
    float dzt[kProjectP];
    const float4* dz4 = reinterpret_cast<const float4*>(dz + t * kProjectP);  // 128-byte rows: aligned
#pragma unroll
    for (int v = 0; v < kProjectP / 4; ++v) {
      const float4 q = __ldg(dz4 + v);
      dzt[4 * v] = q.x, dzt[4 * v + 1] = q.y, dzt[4 * v + 2] = q.z, dzt[4 * v + 3] = q.w;
    }
    float s = 0;
    for (std::int64_t k = lane; k < k_len; k += 32) {
      float wr[kProjectP];
      load_weight_row(w, k, wr);
      s = fmaf(to_float(ht[k]), dot_row(dzt, wr), s);
    }
    s = warp_sum(s);
    const float rt = r[t];
    const float coef = rt * rt * rt * s / static_cast<float>(k_len);
    for (std::int64_t k = lane; k < k_len; k += 32) {
      float wr[kProjectP];
      load_weight_row(w, k, wr);
      dh[t * k_len + k] = from_float<T>(rt * dot_row(dzt, wr) - coef * to_float(ht[k]));
    }
  }
}

// One warp per token; `warps_per_block` warps per block, grid capped at 65535 blocks (warps stride on).
template <class T>
void launch_bwd_dx_fma(const T* h, const T* w, const float* r, const float* dz, T* dh, std::int64_t tokens,
                       std::int64_t k_len, int warps_per_block, cudaStream_t stream) {
  const std::int64_t blocks = (tokens + warps_per_block - 1) / warps_per_block;
  const unsigned grid = static_cast<unsigned>(blocks < 65535 ? blocks : 65535);
  bwd_dx_warp_per_token<T><<<grid, warps_per_block * 32, 0, stream>>>(h, w, r, dz, dh, tokens, k_len);
}

}  // namespace kwb
