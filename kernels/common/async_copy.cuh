// Per-thread asynchronous copies into shared memory (cp.async), L2 eviction policies and
// single-access vector loads and stores: the pieces of the cp.async row rings
// (kernels/common/norm_backward.cuh).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kwb {

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// An L2 eviction policy for the streams read or written once: evict_first (cache = 2) or
// evict_normal, the default priority (cache = 1).
__device__ __forceinline__ std::uint64_t l2_policy(bool evict_first) {
  std::uint64_t policy;
  if (evict_first) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  else asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}

template <int Bytes>
__device__ __forceinline__ void cp_async(void* smem_dst, const void* global_src, std::uint64_t policy) {
  const auto dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  if constexpr (Bytes == 16)
    asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(global_src),
                 "l"(policy) : "memory");
  else
    asm volatile("cp.async.ca.shared.global.L2::cache_hint [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(global_src),
                 "n"(Bytes), "l"(policy) : "memory");
}

// Waits until at most `pending` (0..3) of this thread's newest copy groups are in flight.
__device__ __forceinline__ void cp_async_wait(int pending) {
  switch (pending) {
    case 0: asm volatile("cp.async.wait_group 0;\n" ::: "memory"); break;
    case 1: asm volatile("cp.async.wait_group 1;\n" ::: "memory"); break;
    case 2: asm volatile("cp.async.wait_group 2;\n" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 3;\n" ::: "memory"); break;
  }
}

// One vector of 16, 8 or 4 bytes as a single access (read-only cache when global): a Pack of
// bf16 copied as a struct can go through local memory.
template <class P, bool kGlobal>
__device__ __forceinline__ P load_pack(const P* src) {
  P out;
  if constexpr (sizeof(P) == 16) {
    *reinterpret_cast<uint4*>(&out) = kGlobal ? __ldg(reinterpret_cast<const uint4*>(src)) : *reinterpret_cast<const uint4*>(src);
  } else if constexpr (sizeof(P) == 8) {
    *reinterpret_cast<uint2*>(&out) = kGlobal ? __ldg(reinterpret_cast<const uint2*>(src)) : *reinterpret_cast<const uint2*>(src);
  } else {
    static_assert(sizeof(P) == 4);
    *reinterpret_cast<unsigned*>(&out) =
        kGlobal ? __ldg(reinterpret_cast<const unsigned*>(src)) : *reinterpret_cast<const unsigned*>(src);
  }
  return out;
}

// One vector of 16, 8 or 4 bytes stored as a single access with an L2 policy (l2_policy).
template <class P>
__device__ __forceinline__ void store_pack_hinted(P* dst, const P& v, std::uint64_t policy) {
  if constexpr (sizeof(P) == 16) {
    const uint4 u = *reinterpret_cast<const uint4*>(&v);
    asm volatile("st.global.L2::cache_hint.v4.b32 [%0], {%1, %2, %3, %4}, %5;\n" ::"l"(dst), "r"(u.x), "r"(u.y),
                 "r"(u.z), "r"(u.w), "l"(policy) : "memory");
  } else if constexpr (sizeof(P) == 8) {
    const uint2 u = *reinterpret_cast<const uint2*>(&v);
    asm volatile("st.global.L2::cache_hint.v2.b32 [%0], {%1, %2}, %3;\n" ::"l"(dst), "r"(u.x), "r"(u.y), "l"(policy)
                 : "memory");
  } else {
    asm volatile("st.global.L2::cache_hint.b32 [%0], %1, %2;\n" ::"l"(dst), "r"(*reinterpret_cast<const unsigned*>(&v)),
                 "l"(policy) : "memory");
  }
}

}  // namespace kwb
