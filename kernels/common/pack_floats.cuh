// A Pack of 16-bit floats to fp32 and back with one instruction per element (or per pair).
//
// Why: to_float(p.v[e]) on a bf16 pack extracts the element first, so the high half of each
// 32-bit word costs a PRMT and a shift; since bf16 is the top half of an fp32, the low element
// is one shift and the high one a mask. fp16 pairs convert as __half2, and fp32 -> 16-bit packs
// are one F2FP per pair. In streaming kernels that touch every element two or three times
// (the norm backwards), these instructions were a visible share of the issue slots.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "harness/catalogue/device_types.cuh"
#include "kernels/common/vector_pack.cuh"

namespace kwb {

template <class T, int E>
__device__ __forceinline__ void unpack_floats(const Pack<T, E>& p, float (&f)[E]) {
  if constexpr (std::is_same_v<T, __nv_bfloat16> && E % 2 == 0) {
    unsigned w[E / 2];
    memcpy(w, &p, sizeof(p));  // a bit cast: register moves, no memory
#pragma unroll
    for (int i = 0; i < E / 2; ++i) {
      f[2 * i] = __uint_as_float(w[i] << 16);             // the low element of the word
      f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);  // the high one
    }
  } else if constexpr (std::is_same_v<T, __half> && E % 2 == 0) {
    __half2 h[E / 2];
    memcpy(h, &p, sizeof(p));
#pragma unroll
    for (int i = 0; i < E / 2; ++i) {
      const float2 t = __half22float2(h[i]);
      f[2 * i] = t.x;
      f[2 * i + 1] = t.y;
    }
  } else {
#pragma unroll
    for (int e = 0; e < E; ++e) f[e] = to_float(p.v[e]);
  }
}

template <class T, int E>
__device__ __forceinline__ Pack<T, E> pack_floats(const float (&f)[E]) {
  Pack<T, E> p;
  if constexpr (std::is_same_v<T, __nv_bfloat16> && E % 2 == 0) {
    __nv_bfloat162 h[E / 2];
#pragma unroll
    for (int i = 0; i < E / 2; ++i) h[i] = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
    memcpy(&p, h, sizeof(p));
  } else if constexpr (std::is_same_v<T, __half> && E % 2 == 0) {
    __half2 h[E / 2];
#pragma unroll
    for (int i = 0; i < E / 2; ++i) h[i] = __floats2half2_rn(f[2 * i], f[2 * i + 1]);
    memcpy(&p, h, sizeof(p));
  } else {
#pragma unroll
    for (int e = 0; e < E; ++e) p.v[e] = from_float<T>(f[e]);
  }
  return p;
}

// dst = src as a bit copy (register moves): a Pack<bf16> assignment can go through local memory.
template <class T, int E>
__device__ __forceinline__ void copy_pack(Pack<T, E>& dst, const Pack<T, E>& src) {
  memcpy(&dst, &src, sizeof(dst));
}

}  // namespace kwb
