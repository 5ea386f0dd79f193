// The fp32 path of mhc_rmsnorm_project_fwd's tensor-core variants: a token tile on CUDA cores
// with W shared through shared memory (fp32 has no tensor-core target: a bf16 MMA would round
// H and W, TF32 would miss the fp32 tolerance).
//
// A block of 256 threads owns 64 tokens and walks K in chunks of 32:
//   - load: each thread loads 2 float4 of the H tile [64, 32] (fp32 rows are 16-byte aligned,
//     K = 4C is a multiple of 4, so a float4 never straddles K; zeros past T and K), adds their
//     squares to its tokens' sums, and stores them transposed, Hs[k][token] (row stride 65:
//     conflict-free), plus one float4 of the W chunk [32, 32];
//   - compute: thread (tid / 8, tid % 8) holds Z for 2 tokens x 4 outputs: per k, one float2 of
//     Hs and one float4 of Ws feed 8 FMAs.
// Then r from the sums (8 lanes per token), Z = r * acc as float4 stores.
// Napkin math (fp32, 65536 x 1024): H 1 GB (~350 us at 3000 GB/s) and 17 GFLOP of FMA (~270 us at
// the 64 TFLOP/s fp32 peak): FMA-bound, and short of that peak (two shared loads per 8 FMAs and a
// __syncthreads pair per 32-wide chunk). Measured: docs/results.md.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "harness/catalogue/registry.hpp"
#include "kernels/mhc_rmsnorm_project_fwd/project_fma.cuh"

namespace kwb {
namespace {  // internal linkage: each kernel file that includes this gets its own copy

constexpr int kTiledTokens = 64;   // tokens per block
constexpr int kTiledChunk = 32;    // K values per chunk
constexpr int kTiledThreads = 256;

__global__ void __launch_bounds__(kTiledThreads) project_fma_tiled_fp32(const float* __restrict__ h,
                                                                         const float* __restrict__ w,
                                                                         float* __restrict__ z, float* __restrict__ r,
                                                                         std::int64_t tokens, std::int64_t k_len) {
  __shared__ float hs[kTiledChunk][kTiledTokens + 1];          // (KC, BM + pad): H transposed
  __shared__ __align__(16) float ws[kTiledChunk][kProjectP];   // (KC, P)
  __shared__ float r_tile[kTiledTokens];
  const int tid = threadIdx.x;
  const std::int64_t tile = std::int64_t{blockIdx.x} * kTiledTokens;
  const int load_token = tid / 8, load_k = (tid % 8) * 4;  // tokens load_token and load_token + 32
  const int t0 = (tid / 8) * 2, p0 = (tid % 8) * 4;         // this thread's 2 tokens x 4 outputs
  float ss[2] = {0, 0};
  float acc[2][4] = {};
  for (std::int64_t k0 = 0; k0 < k_len; k0 += kTiledChunk) {
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int row = load_token + j * 32;
      const std::int64_t token = tile + row, k = k0 + load_k;
      float4 v = make_float4(0, 0, 0, 0);
      if (token < tokens && k < k_len) v = __ldcs(reinterpret_cast<const float4*>(h + token * k_len + k));
      ss[j] = fmaf(v.x, v.x, fmaf(v.y, v.y, fmaf(v.z, v.z, fmaf(v.w, v.w, ss[j]))));
      hs[load_k][row] = v.x;
      hs[load_k + 1][row] = v.y;
      hs[load_k + 2][row] = v.z;
      hs[load_k + 3][row] = v.w;
    }
    {
      const int kr = tid / 8, pc = (tid % 8) * 4;  // 256 float4 of W: one per thread
      float4 v = make_float4(0, 0, 0, 0);
      if (k0 + kr < k_len) v = __ldg(reinterpret_cast<const float4*>(w + (k0 + kr) * kProjectP + pc));
      *reinterpret_cast<float4*>(&ws[kr][pc]) = v;
    }
    __syncthreads();
#pragma unroll 8
    for (int k = 0; k < kTiledChunk; ++k) {
      const float x0 = hs[k][t0], x1 = hs[k][t0 + 1];
      const float4 wv = *reinterpret_cast<const float4*>(&ws[k][p0]);
      acc[0][0] = fmaf(x0, wv.x, acc[0][0]);
      acc[0][1] = fmaf(x0, wv.y, acc[0][1]);
      acc[0][2] = fmaf(x0, wv.z, acc[0][2]);
      acc[0][3] = fmaf(x0, wv.w, acc[0][3]);
      acc[1][0] = fmaf(x1, wv.x, acc[1][0]);
      acc[1][1] = fmaf(x1, wv.y, acc[1][1]);
      acc[1][2] = fmaf(x1, wv.z, acc[1][2]);
      acc[1][3] = fmaf(x1, wv.w, acc[1][3]);
    }
    __syncthreads();  // the next chunk overwrites hs and ws
  }
  // The 8 lanes tid & ~7 .. tid | 7 loaded the same two tokens.
#pragma unroll
  for (int j = 0; j < 2; ++j) {
    float s = ss[j];
    s += __shfl_xor_sync(0xffffffffu, s, 1);
    s += __shfl_xor_sync(0xffffffffu, s, 2);
    s += __shfl_xor_sync(0xffffffffu, s, 4);
    if ((tid & 7) == 0) {
      const int row = load_token + j * 32;
      const float rt = rsqrtf(s / static_cast<float>(k_len) + static_cast<float>(kMhcRmsEps));
      r_tile[row] = rt;
      if (tile + row < tokens) r[tile + row] = rt;
    }
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const std::int64_t token = tile + t0 + i;
    if (token >= tokens) continue;
    const float rt = r_tile[t0 + i];
    *reinterpret_cast<float4*>(z + token * kProjectP + p0) =
        make_float4(rt * acc[i][0], rt * acc[i][1], rt * acc[i][2], rt * acc[i][3]);
  }
}

// An fp32 case of the op: H and W in, Z and r out.
void launch_project_fma_tiled(const LaunchArgs& a, const MhcAxes& axes) {
  const std::int64_t tiles = (axes.tokens + kTiledTokens - 1) / kTiledTokens;
  project_fma_tiled_fp32<<<static_cast<unsigned>(tiles), kTiledThreads, 0, a.stream>>>(
      a.tensor<const float>("H"), a.tensor<const float>("W"), a.tensor<float>("Z"), a.tensor<float>("r"), axes.tokens,
      axes.flat_len());
}

}  // namespace
}  // namespace kwb
