// The fp32 path of mhc_rmsnorm_project_bwd_dx's fused_v2: a token tile on CUDA cores with W and
// dZ shared through shared memory (a bf16 MMA would round fp32 W).
//
// A block of 256 threads owns 64 tokens; dZ [64, 32] is staged once, W in chunks of 32 rows.
// Thread (tid / 8, tid % 8) owns tokens t0, t0 + 1 (t0 = 2 (tid / 8)) and columns k .. k + 3 of
// each chunk (k = 4 (tid % 8)): per p, two dZ values and four W values feed 8 FMAs of g. H is
// read straight from global memory as float4 (fp32 rows are 16-byte aligned and K = 4C is a
// multiple of 4: a float4 never straddles K).
//   pass 1: s += H . g per token (the 8 threads of a token pair then sum with shuffles);
//   pass 2: g recomputed, dH = r g - (r^3 / K) s H written as float4.
// Shared rows are padded to 33 floats so that the 8 different k (or t) of a warp's loads fall in
// distinct banks. Napkin math (fp32, 65536 x 1024): H read twice and dH written once (3 GB, ~1 ms
// at 3000 GB/s) and 2 x 17 GFLOP of FMA at ~6 shared loads per 8 FMAs: FMA/LDS-bound. Measured:
// docs/results.md.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/mhc_rmsnorm_project_fwd/project_fma.cuh"

namespace kwb {
namespace {  // internal linkage: each kernel file that includes this gets its own copy

constexpr int kBwdTiledTokens = 64;
constexpr int kBwdTiledChunk = 32;
constexpr int kBwdTiledThreads = 256;

__global__ void __launch_bounds__(kBwdTiledThreads) bwd_dx_fma_tiled_fp32(const float* __restrict__ h,
                                                                           const float* __restrict__ w,
                                                                           const float* __restrict__ r,
                                                                           const float* __restrict__ dz,
                                                                           float* __restrict__ dh, std::int64_t tokens,
                                                                           std::int64_t k_len) {
  __shared__ float dzs[kBwdTiledTokens][kProjectP + 1];  // (BM, P + pad)
  __shared__ float ws[kBwdTiledChunk][kProjectP + 1];    // (KC, P + pad)
  const int tid = threadIdx.x;
  const std::int64_t tile = std::int64_t{blockIdx.x} * kBwdTiledTokens;
  const int t0 = (tid / 8) * 2, kq = (tid % 8) * 4;
  for (int v = tid; v < kBwdTiledTokens * kProjectP / 4; v += kBwdTiledThreads) {
    const int t = v / 8, p = (v % 8) * 4;
    float4 q = make_float4(0, 0, 0, 0);
    if (tile + t < tokens) q = *reinterpret_cast<const float4*>(dz + (tile + t) * kProjectP + p);
    dzs[t][p] = q.x, dzs[t][p + 1] = q.y, dzs[t][p + 2] = q.z, dzs[t][p + 3] = q.w;
  }
  const bool valid[2] = {tile + t0 < tokens, tile + t0 + 1 < tokens};

  // g for this thread's 2 tokens x 4 columns of the chunk starting at k0 (W chunk staged first).
  auto chunk_g = [&](std::int64_t k0, float (&g)[2][4]) {
    {
      const int kr = tid / 8, pc = (tid % 8) * 4;  // 256 float4 of W: one per thread
      float4 q = make_float4(0, 0, 0, 0);
      if (k0 + kr < k_len) q = __ldg(reinterpret_cast<const float4*>(w + (k0 + kr) * kProjectP + pc));
      ws[kr][pc] = q.x, ws[kr][pc + 1] = q.y, ws[kr][pc + 2] = q.z, ws[kr][pc + 3] = q.w;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int e = 0; e < 4; ++e) g[i][e] = 0;
#pragma unroll 8
    for (int p = 0; p < kProjectP; ++p) {
      const float d0 = dzs[t0][p], d1 = dzs[t0 + 1][p];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float wv = ws[kq + e][p];
        g[0][e] = fmaf(d0, wv, g[0][e]);
        g[1][e] = fmaf(d1, wv, g[1][e]);
      }
    }
    __syncthreads();  // the next chunk overwrites ws
  };
  auto load_h = [&](int i, std::int64_t k) {
    if (!valid[i] || k >= k_len) return make_float4(0, 0, 0, 0);
    return __ldcs(reinterpret_cast<const float4*>(h + (tile + t0 + i) * k_len + k));
  };

  float s[2] = {0, 0};
  for (std::int64_t k0 = 0; k0 < k_len; k0 += kBwdTiledChunk) {
    float g[2][4];
    chunk_g(k0, g);
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const float4 hv = load_h(i, k0 + kq);
      s[i] = fmaf(hv.x, g[i][0], fmaf(hv.y, g[i][1], fmaf(hv.z, g[i][2], fmaf(hv.w, g[i][3], s[i]))));
    }
  }
  float rt[2], coef[2];
  const float inv_k = 1.0f / static_cast<float>(k_len);
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    s[i] += __shfl_xor_sync(0xffffffffu, s[i], 1);
    s[i] += __shfl_xor_sync(0xffffffffu, s[i], 2);
    s[i] += __shfl_xor_sync(0xffffffffu, s[i], 4);
    rt[i] = valid[i] ? r[tile + t0 + i] : 0.0f;
    coef[i] = rt[i] * rt[i] * rt[i] * s[i] * inv_k;
  }
  for (std::int64_t k0 = 0; k0 < k_len; k0 += kBwdTiledChunk) {
    float g[2][4];
    chunk_g(k0, g);
    const std::int64_t k = k0 + kq;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      if (!valid[i] || k >= k_len) continue;
      const float4 hv = load_h(i, k);
      *reinterpret_cast<float4*>(dh + (tile + t0 + i) * k_len + k) =
          make_float4(rt[i] * g[i][0] - coef[i] * hv.x, rt[i] * g[i][1] - coef[i] * hv.y,
                      rt[i] * g[i][2] - coef[i] * hv.z, rt[i] * g[i][3] - coef[i] * hv.w);
    }
  }
}

void launch_bwd_dx_fma_tiled(const float* h, const float* w, const float* r, const float* dz, float* dh,
                             std::int64_t tokens, std::int64_t k_len, cudaStream_t stream) {
  const std::int64_t tiles = (tokens + kBwdTiledTokens - 1) / kBwdTiledTokens;
  bwd_dx_fma_tiled_fp32<<<static_cast<unsigned>(tiles), kBwdTiledThreads, 0, stream>>>(h, w, r, dz, dh, tokens,
                                                                                        k_len);
}

}  // namespace
}  // namespace kwb
