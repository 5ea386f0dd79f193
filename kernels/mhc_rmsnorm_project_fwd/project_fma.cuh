// The CUDA-core (FMA) path of mhc_rmsnorm_project_fwd: one warp per token, any dtype, any K.
//
// Each lane walks the token's K = n * C values with a stride of 32 (element k = lane + 32 j, a
// coalesced load per warp), squares it into its sum of squares and adds h_k * W[k, 0..31] into
// 32 fp32 accumulators, W's row of P = 32 read as 16-byte vectors (a row is 64 or 128 bytes,
// always 16-byte aligned). The warp then sums each accumulator across its lanes (butterfly
// shuffles) and lane p writes Z[t, p] = r * acc_p; lane 0 writes r.
//
// Not fast, and not meant to be: every token reads all of W (K x 64 bytes in bf16) through
// L1/L2, 32x the bytes of its own H, and the FMAs are 32 per element of H. It is the simple,
// obviously correct fused kernel (fused_v1) and the fp32 path of fused_v2.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "harness/catalogue/device_types.cuh"
#include "kernels/common/block_reduce.cuh"
#include "reference/mhc.hpp"

namespace kwb {

inline constexpr int kProjectP = static_cast<int>(kMhcProjectWidth);  // P = 32, one output per lane

// W's row k (P values) as floats.
template <class T>
__device__ __forceinline__ void load_weight_row(const T* w, std::int64_t k, float (&out)[kProjectP]) {
  constexpr int kPerVec = 16 / sizeof(T);
  const uint4* row = reinterpret_cast<const uint4*>(w + k * kProjectP);
#pragma unroll
  for (int v = 0; v < kProjectP / kPerVec; ++v) {
    const uint4 bits = __ldg(row + v);
    const T* vals = reinterpret_cast<const T*>(&bits);
#pragma unroll
    for (int e = 0; e < kPerVec; ++e) out[v * kPerVec + e] = to_float(vals[e]);
  }
}

template <class T>
__global__ void project_fma_warp_per_token(const T* __restrict__ h, const T* __restrict__ w, float* __restrict__ z,
                                           float* __restrict__ r, std::int64_t tokens, std::int64_t k_len) {
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t{gridDim.x} * (blockDim.x >> 5);
  for (std::int64_t t = blockIdx.x * std::int64_t{blockDim.x >> 5} + (threadIdx.x >> 5); t < tokens; t += warps) {
    const T* ht = h + t * k_len;
    float acc[kProjectP] = {};
    float sum_sq = 0;
    for (std::int64_t k = lane; k < k_len; k += 32) {
      const float x = to_float(ht[k]);
      sum_sq += x * x;
      float wr[kProjectP];
      load_weight_row(w, k, wr);
#pragma unroll
      for (int p = 0; p < kProjectP; ++p) acc[p] = fmaf(x, wr[p], acc[p]);
    }
    sum_sq = warp_sum(sum_sq);
    const float rt = rsqrtf(sum_sq / static_cast<float>(k_len) + static_cast<float>(kMhcRmsEps));
    float mine = 0;
#pragma unroll
    for (int p = 0; p < kProjectP; ++p) {
      const float total = warp_sum(acc[p]);
      if (lane == p) mine = total;
    }
    z[t * kProjectP + lane] = rt * mine;
    if (lane == 0) r[t] = rt;
  }
}

// Grid: one warp per token, capped at 16 resident-ish waves of blocks; the warps stride on.
template <class T>
void launch_project_fma(const T* h, const T* w, float* z, float* r, std::int64_t tokens, std::int64_t k_len,
                        int warps_per_block, cudaStream_t stream) {
  const std::int64_t blocks = (tokens + warps_per_block - 1) / warps_per_block;
  const unsigned grid = static_cast<unsigned>(blocks < 65535 ? blocks : 65535);
  project_fma_warp_per_token<T><<<grid, warps_per_block * 32, 0, stream>>>(h, w, z, r, tokens, k_len);
}

}  // namespace kwb
