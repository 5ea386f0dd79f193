// mhc_rmsnorm_project_bwd_dx fused_v1_warp_per_token_two_pass: dH in one launch, one warp per
// token, two passes over the token's K = n * C values; any dtype, any C.
//
//   pass 1: lane walks k = lane, lane + 32, ...: g_k = dZ[t] . W[k, :] (dZ's 32 values held in
//           every lane's registers, W's row read as 16-byte vectors), s += H[t, k] g_k; the warp
//           sums s (shuffles), coef = r^3 s / K;
//   pass 2: the same walk recomputes g_k and writes dH[t, k] = r g_k - coef H[t, k].
// s needs all of H[t] before any dH[t] can be written, so H[t] is read twice: the second read
// (8 KB per token at C = 1024 bf16, one warp's recent loads) should hit L2. g is recomputed
// rather than kept (K floats per token do not fit a warp's registers at C = 4096).
//
// Napkin math (bf16, 65536 x 1024): DRAM H 512 MB + dH 512 MB + dZ 8 MB: ~340 us at 3000 GB/s;
// but each token reads W (256 KB) twice through L1/L2 and does 2 x 32 FMAs per element, so this
// kernel is L1/L2- and FMA-bound: expect ~2-4 ms, a few times better than the baseline's ~12 GB
// chain at best. Correctness and clarity first (no performance target for this op); a
// tensor-core version would tile tokens as the forward's fused_v2 does.
// Registers: 32 dZ + 32 W + addressing, ~90.
#include <cstdint>

#include "catalogue/device_types.cuh"
#include "catalogue/registry.hpp"
#include "kernels/mhc_rmsnorm_project_fwd/project_fma.cuh"

namespace kwb {
namespace {

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

template <class T>
void launch_typed(const LaunchArgs& a) {
  const std::int64_t tokens = a.shape.at("tokens"), k_len = kMhcStreams * a.shape.at("channels");
  const int warps_per_block = static_cast<int>(a.tunable("warps_per_block"));
  const std::int64_t blocks = (tokens + warps_per_block - 1) / warps_per_block;
  const unsigned grid = static_cast<unsigned>(blocks < 65535 ? blocks : 65535);
  bwd_dx_warp_per_token<T><<<grid, warps_per_block * 32, 0, a.stream>>>(
      static_cast<const T*>(a.tensors[0]), static_cast<const T*>(a.tensors[1]), static_cast<const float*>(a.tensors[2]),
      static_cast<const float*>(a.tensors[3]), static_cast<T*>(a.tensors[4]), tokens, k_len);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mhc_rmsnorm_project_bwd_dx",
    .name = "fused_v1_warp_per_token_two_pass",
    .role = Role::fused,
    .description = "one warp per token: pass 1 s = H.(dZ @ W^T), pass 2 dH = r g - (r^3 / K) s H with g "
                   "recomputed; W rows from L1/L2 (correct and simple, not fast)",
    .launch = [](const LaunchArgs& a) { dispatch_dtype(a.dtype, [&](auto tag) { launch_typed<decltype(tag)>(a); }); },
    .refuse = {},
    .tunables = {{"warps_per_block", {8, 4, 16}, "warps (tokens in flight) per block of 32 x this threads"}},
});

}  // namespace
}  // namespace kwb
