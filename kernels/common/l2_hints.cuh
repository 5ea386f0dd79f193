// L2 eviction hints for inputs a kernel reads once (a KV cache in decoding, the tokens a pooling
// sums). Why they can matter to a read-only kernel: a read that misses the L2 must evict a line
// for its own, and when the L2 holds dirty lines (a previous kernel's writes; kwb's default dirty
// flush leaves it full of them) every plain read also pays for writing one back. A read whose
// lines are marked first to go evicts its own earlier lines instead, so the dirty ones stay where
// they are and the read moves about its own bytes only. The `l2_hint` tunable of the kernels
// that use these (l2_hint.hpp: its values and the rule of its default) lets a sweep measure that.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/common/l2_hint.hpp"

namespace kwb {
namespace l2 {

__device__ __forceinline__ std::uint64_t policy_evict_first() {
  std::uint64_t policy;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// A 16-byte load of V from memory no thread of the kernel writes, with H's hint (`policy` from
// policy_evict_first() where H is kEvictFirst, else unused). Not volatile: scheduled as any load.
template <Hint H, class V>
__device__ __forceinline__ V load16(const V* p, std::uint64_t policy) {
  static_assert(sizeof(V) == 16);
  if constexpr (H == Hint::kNormal) {
    return *p;
  } else {
    uint4 w;
    if constexpr (H == Hint::kStreaming)
      w = __ldcs(reinterpret_cast<const uint4*>(p));
    else
      asm("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
          : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w)
          : "l"(p), "l"(policy));
    V v;
    std::memcpy(&v, &w, 16);
    return v;
  }
}

// cp.async of 16 bytes into shared memory (zero-filled where !valid) under an L2 policy.
__device__ __forceinline__ void cp_async_16(std::uint32_t dst, const void* src, bool valid,
                                            std::uint64_t policy) {
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;\n" ::"r"(dst),
               "l"(src), "r"(valid ? 16 : 0), "l"(policy)
               : "memory");
}

}  // namespace l2
}  // namespace kwb
