// The last loop of the any-cols RMSNorm forward kernels (fused_v3, fused_v4): the VPT 16-byte
// row vectors a thread holds in registers, scaled by inv_rms and the weight, stored. Vector i is
// the row's body vector first + i * stride, present where that index is below nvec. The index
// type is the caller's (threadIdx.x stays unsigned), so the arithmetic, and the generated code
// (checked instantiation by instantiation), are the ones the loop had inline. Two near misses
// stay inline: fused_v2's copy of this loop (its 1-element packs compiled differently through
// the helper) and the sum-of-squares loop (as a helper taking the running sum, it changed the
// code of v3's one-vector-per-thread kernels).
#pragma once

#include "harness/catalogue/device_types.cuh"
#include "kernels/common/vector_pack.cuh"

namespace kwb {

// y[idx] = row vector * inv_rms * weight(idx) for this thread's row vectors, idx their index in
// the row's body; weight(idx) returns that body vector's Pack of the weight.
template <class T, int E, int VPT, class I, class Weight>
__device__ __forceinline__ void store_scaled_row(Pack<T, E>* y, const Pack<T, E> (&row)[VPT], float inv_rms, I first,
                                                 I stride, int nvec, Weight weight) {
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const int idx = first + i * stride;
    if (idx < nvec) {
      const Pack<T, E> wp = weight(idx);
      Pack<T, E> out;
#pragma unroll
      for (int e = 0; e < E; ++e) out.v[e] = from_float<T>(to_float(row[i].v[e]) * inv_rms * to_float(wp.v[e]));
      y[idx] = out;
    }
  }
}

}  // namespace kwb
