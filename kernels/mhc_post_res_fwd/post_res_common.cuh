// What the fused post-res kernels (forward and backward) share: the pack width of their
// activation accesses, when the 16-byte path applies, and the per-token coefficient loads.
//
// Activations [T, n, C] and [T, C] are moved in packs of E elements: E = 16 / sizeof(T) (8 bf16,
// 4 fp32) when every row starts on 16 bytes (C a multiple of E and 16-byte aligned bases, which
// cudaMalloc gives), else E = 1 (C = 1, 33: correct, slower, and never the target shape).
// The coefficients of token t, R[t] (16 floats, 64 bytes) and h_post[t] (4 floats, 16 bytes),
// are loaded as float4 on the vector path: 5 loads that every thread of a warp mostly shares
// (one L1 broadcast each), instead of 20.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "harness/catalogue/device_types.cuh"
#include "kernels/common/vector_pack.cuh"
#include "reference/mhc.hpp"

namespace kwb {

inline constexpr int kPostResStreams = static_cast<int>(kMhcStreams);  // n = 4
static_assert(kPostResStreams == 4, "the coefficient loads below assume n = 4 (R[t] = 4 float4)");

template <class T>
inline constexpr int kPostResPackElems = 16 / static_cast<int>(sizeof(T));

// True when the 16-byte path applies: C a multiple of the pack and every base 16-byte aligned.
template <class T>
bool post_res_vectorizable(std::int64_t channels, std::initializer_list<const void*> bases) {
  if (channels % kPostResPackElems<T> != 0) return false;
  for (const void* p : bases)
    if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0) return false;
  return true;
}

// R[t] row-major into r[i * n + j], h_post[t] into hp[i]. Vector loads need 16-byte aligned
// bases (token t's R starts at 64 t bytes, its h_post at 16 t bytes).
template <bool kVector>
__device__ __forceinline__ void load_post_res_coefficients(const float* R, const float* h_post, std::int64_t t,
                                                           float (&r)[16], float (&hp)[4]) {
  if constexpr (kVector) {
    const float4* r4 = reinterpret_cast<const float4*>(R + t * 16);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float4 v = __ldg(r4 + k);
      r[4 * k] = v.x, r[4 * k + 1] = v.y, r[4 * k + 2] = v.z, r[4 * k + 3] = v.w;
    }
    const float4 h = __ldg(reinterpret_cast<const float4*>(h_post + t * 4));
    hp[0] = h.x, hp[1] = h.y, hp[2] = h.z, hp[3] = h.w;
  } else {
#pragma unroll
    for (int k = 0; k < 16; ++k) r[k] = __ldg(R + t * 16 + k);
#pragma unroll
    for (int k = 0; k < 4; ++k) hp[k] = __ldg(h_post + t * 4 + k);
  }
}

}  // namespace kwb
