// mhc_rmsnorm_project_bwd_dx fused_v2_mma_bf16_tile16_split_k: v1's two passes with
// g = dZ @ W^T on tensor cores (bf16), a block of warps per 16-token tile splitting its columns;
// fp32 cases run the tiled FMA kernel of bwd_fma_tiled.cuh (no fp32 target).
//
// A block owns 16 tokens. G [16, K] = dZ [16, 32] @ W^T is an MMA with the P = 32 outputs of the
// forward as its reduction dimension: mma.sync m16n8k16 with A = dZ (2 k16 steps over P) and
// B = W^T, whose fragment pairs (two consecutive p of one k) are W[k][p], W[k][p + 1]: consecutive
// in W's row-major [K, P] layout, so B comes straight from global memory (L1/L2 keep W; no
// packing). dZ is fp32: it is split into dZ_hi = bf16(dZ) and dZ_lo = bf16(dZ - dZ_hi), and
// G = dZ_hi W + dZ_lo W (two MMAs; relative error ~2^-16, far inside the fp32-accumulation
// tolerance; bf16 W is exact).
// Warp w of the block's `warps_per_tile` takes the 8-column n-tiles w, w + warps, ... The
// accumulator fragment of an n-tile holds G at rows group and group + 8, columns
// 2 quad + {0, 1}: the lane loads H at the same places as bf16 pairs (K = 4C is even, so pairs
// are 4-byte aligned and never straddle K) and
//   pass 1: s += H . G per row, summed over the quad (shuffles), then over the warps in warp order
//           through shared memory (deterministic); coef = r^3 s / K;
//   pass 2: G recomputed n-tile by n-tile, dH = r G - coef H stored as bf16 pairs.
// Rows past T load zeros and store nothing; columns past K are skipped.
//
// Napkin math (bf16, 65536 x 1024): H read twice (the second read mostly from L2: a block's tile
// is 128 KB) and dH written once: ~1-1.5 GB, ~350-500 us at 3000 GB/s; MMAs 4 x 17 GFLOP. No
// performance target for this op. The loop is latency-bound (each n-tile's W and H loads feed one
// MMA pair), hence several warps per tile (one warp per tile, an earlier version, was slower; 16
// warps win at small T). Measured: docs/results.md.
#include <cuda_bf16.h>

#include <cstdint>

#include "harness/catalogue/device_types.cuh"
#include "harness/catalogue/registry.hpp"
#include "kernels/mhc_rmsnorm_project_bwd_dx/bwd_fma_tiled.cuh"
#include "kernels/mhc_rmsnorm_project_fwd/project_mma.cuh"

namespace kwb {
namespace {

__device__ __forceinline__ std::uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);  // .x = lo (lower address)
  return *reinterpret_cast<const std::uint32_t*>(&v);
}

// The split A fragments of dZ for one k16 step over P: hi = bf16(dZ), lo = bf16(dZ - hi).
__device__ __forceinline__ void load_dz_fragment(const float* dz, std::int64_t row_lo, std::int64_t tokens, int col,
                                                 std::uint32_t (&hi)[4], std::uint32_t (&lo)[4]) {
  // Fragment registers: 0 = (row_lo, col), 1 = (row_lo + 8, col), 2 = (row_lo, col + 8), 3 = (row_lo + 8, col + 8).
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const std::int64_t row = row_lo + (i & 1) * 8;
    const int c = col + (i >> 1) * 8;
    float2 v = make_float2(0.0f, 0.0f);
    if (row < tokens) v = *reinterpret_cast<const float2*>(dz + row * kProjectP + c);
    const __nv_bfloat162 h2 = __floats2bfloat162_rn(v.x, v.y);
    const float2 back = __bfloat1622float2(h2);
    hi[i] = *reinterpret_cast<const std::uint32_t*>(&h2);
    lo[i] = pack_bf16x2(v.x - back.x, v.y - back.y);
  }
}

// G for the n-tile of columns k_base .. k_base + 7 (acc: rows lo, lo; hi, hi at 2 quad + {0, 1}).
__device__ __forceinline__ void g_tile(const __nv_bfloat16* w, std::int64_t k_base, std::int64_t k_len, int group,
                                       int quad, const std::uint32_t (&a_hi)[2][4],
                                       const std::uint32_t (&a_lo)[2][4], float (&acc)[4]) {
  acc[0] = acc[1] = acc[2] = acc[3] = 0.0f;
  const std::int64_t k = k_base + group;  // this lane's column n of B
#pragma unroll
  for (int ks = 0; ks < 2; ++ks) {
    std::uint32_t b0 = 0, b1 = 0;
    if (k < k_len) {
      const __nv_bfloat16* row = w + k * kProjectP + ks * 16 + quad * 2;
      b0 = __ldg(reinterpret_cast<const unsigned int*>(row));
      b1 = __ldg(reinterpret_cast<const unsigned int*>(row + 8));
    }
    mma_bf16_16816(acc, a_hi[ks], b0, b1);
    mma_bf16_16816(acc, a_lo[ks], b0, b1);
  }
}

// A block of `warps` warps owns one 16-token tile; warp w takes the n-tiles w, w + warps, ... of
// every row (neighbouring warps read neighbouring 16-byte pieces of a row), and the warps' partial
// s are summed through shared memory in warp order (deterministic).
__global__ void bwd_dx_mma_bf16(const __nv_bfloat16* __restrict__ h, const __nv_bfloat16* __restrict__ w,
                                const float* __restrict__ r, const float* __restrict__ dz,
                                __nv_bfloat16* __restrict__ dh, std::int64_t tokens, std::int64_t k_len) {
  __shared__ float s_part[32][16];  // (warp, row of the tile)
  const int lane = threadIdx.x & 31, group = lane >> 2, quad = lane & 3;
  const int warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const std::int64_t tile = std::int64_t{blockIdx.x} * 16;
  const std::int64_t row_lo = tile + group, row_hi = row_lo + 8;
  std::uint32_t a_hi[2][4], a_lo[2][4];
#pragma unroll
  for (int ks = 0; ks < 2; ++ks) load_dz_fragment(dz, row_lo, tokens, ks * 16 + quad * 2, a_hi[ks], a_lo[ks]);
  const bool has_lo = row_lo < tokens, has_hi = row_hi < tokens;
  const __nv_bfloat16* h_lo = h + row_lo * k_len;
  const __nv_bfloat16* h_hi = h + row_hi * k_len;

  // Pass 1: s = H . G per row, over this warp's n-tiles.
  float s_lo = 0, s_hi = 0;
#pragma unroll 2
  for (std::int64_t kb = warp * 8; kb < k_len; kb += warps * 8) {
    float acc[4];
    g_tile(w, kb, k_len, group, quad, a_hi, a_lo, acc);
    const std::int64_t k = kb + quad * 2;
    if (k < k_len) {
      if (has_lo) {
        const float2 hv = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(h_lo + k));
        s_lo = fmaf(hv.x, acc[0], fmaf(hv.y, acc[1], s_lo));
      }
      if (has_hi) {
        const float2 hv = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(h_hi + k));
        s_hi = fmaf(hv.x, acc[2], fmaf(hv.y, acc[3], s_hi));
      }
    }
  }
  s_lo += __shfl_xor_sync(0xffffffffu, s_lo, 1);
  s_lo += __shfl_xor_sync(0xffffffffu, s_lo, 2);
  s_hi += __shfl_xor_sync(0xffffffffu, s_hi, 1);
  s_hi += __shfl_xor_sync(0xffffffffu, s_hi, 2);
  if (quad == 0) {
    s_part[warp][group] = s_lo;
    s_part[warp][group + 8] = s_hi;
  }
  __syncthreads();
  s_lo = 0;
  s_hi = 0;
  for (int v = 0; v < warps; ++v) {
    s_lo += s_part[v][group];
    s_hi += s_part[v][group + 8];
  }
  const float inv_k = 1.0f / static_cast<float>(k_len);
  const float r_lo = has_lo ? r[row_lo] : 0.0f, r_hi = has_hi ? r[row_hi] : 0.0f;
  const float c_lo = r_lo * r_lo * r_lo * s_lo * inv_k, c_hi = r_hi * r_hi * r_hi * s_hi * inv_k;

  // Pass 2: dH = r G - coef H.
  __nv_bfloat16* d_lo = dh + row_lo * k_len;
  __nv_bfloat16* d_hi = dh + row_hi * k_len;
#pragma unroll 2
  for (std::int64_t kb = warp * 8; kb < k_len; kb += warps * 8) {
    float acc[4];
    g_tile(w, kb, k_len, group, quad, a_hi, a_lo, acc);
    const std::int64_t k = kb + quad * 2;
    if (k < k_len) {
      if (has_lo) {
        const float2 hv = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(h_lo + k));
        *reinterpret_cast<std::uint32_t*>(d_lo + k) = pack_bf16x2(r_lo * acc[0] - c_lo * hv.x, r_lo * acc[1] - c_lo * hv.y);
      }
      if (has_hi) {
        const float2 hv = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(h_hi + k));
        *reinterpret_cast<std::uint32_t*>(d_hi + k) = pack_bf16x2(r_hi * acc[2] - c_hi * hv.x, r_hi * acc[3] - c_hi * hv.y);
      }
    }
  }
}

// bf16 on the tensor cores, fp32 on CUDA cores: a dispatch of its own, not by_dtype's three types.
void launch(const LaunchArgs& a) {
  const auto axes = MhcAxes::of(a.shape);
  if (a.dtype == DType::fp32) {  // no tensor-core fp32 target: the tiled FMA kernel (bwd_fma_tiled.cuh)
    launch_bwd_dx_fma_tiled(a.tensor<const float>("H"), a.tensor<const float>("W"), a.tensor<const float>("r"),
                            a.tensor<const float>("dZ"), a.tensor<float>("dH"), axes.tokens, axes.flat_len(),
                            a.stream);
    return;
  }
  const int warps = static_cast<int>(a.tunable("warps_per_tile"));
  const std::int64_t tiles = (axes.tokens + 15) / 16;
  bwd_dx_mma_bf16<<<static_cast<unsigned>(tiles), warps * 32, 0, a.stream>>>(
      a.tensor<const __nv_bfloat16>("H"), a.tensor<const __nv_bfloat16>("W"), a.tensor<const float>("r"),
      a.tensor<const float>("dZ"), a.tensor<__nv_bfloat16>("dH"), axes.tokens, axes.flat_len());
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mhc_rmsnorm_project_bwd_dx",
    .name = "fused_v2_mma_bf16_tile16_split_k",
    .role = Role::fused,
    .description = "bf16: 16 tokens per block, its warps splitting the columns; G = dZ @ W^T on mma.sync (dZ split hi + "
                   "lo), pass 1 s = H.G, "
                   "pass 2 dH = r G - (r^3 / K) s H; fp32 runs a tiled FMA kernel",
    .launch = launch,
    .refuse = {},
    .math = "bf16: bf16, fp32 acc",
    .tunables = {{"warps_per_tile", {8, 4, 16}, "warps sharing one 16-token tile's columns (a block); bf16 only"}},
});

}  // namespace
}  // namespace kwb
