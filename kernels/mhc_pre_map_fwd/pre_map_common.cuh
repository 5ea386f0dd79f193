// What the fused pre-map kernels (mhc_pre_map_fwd, _bwd_dx, _bwd_hpre) share: the choice
// between 16-byte packs and single elements, the step from a run-time "tokens per thread/warp"
// tunable to a compile-time one (so a thread's packs stay in registers), and the load of one
// token's n = 4 fp32 coefficients.
//
// Every row of H [T, n, C], X and dX [T, C] starts at a multiple of C elements, so 16-byte packs
// line up with rows exactly when C is a multiple of the pack (8 bf16 or 4 fp32 elements; C = 1000
// and 1024 are) and the base pointers are 16-byte aligned. Otherwise (C = 1, 33) the same kernel
// runs with packs of one element: slower, but such widths are edge cases, never the target.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "harness/catalogue/device_types.cuh"
#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/vector_pack.cuh"
#include "reference/mhc.hpp"

namespace kwb {

inline constexpr int kPreMapStreams = static_cast<int>(kMhcStreams);  // n = 4
inline constexpr int kPreMapMaxThreads = 512;  // the largest `threads` tunable (launch bounds)

// Elements per 16-byte pack of T.
template <class T>
constexpr int pre_map_vector_elems() {
  return static_cast<int>(16 / sizeof(T));
}

// Whether rows of `channels` elements of T can move as 16-byte packs from these pointers.
template <class T>
bool pre_map_vector_ok(std::int64_t channels, std::initializer_list<const void*> pointers) {
  if (channels % pre_map_vector_elems<T>() != 0) return false;
  for (const void* p : pointers)
    if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0) return false;
  return true;
}

// Calls fn(std::integral_constant<int, E>{}) with E = 16-byte pack elements, or 1 when the rows
// cannot move as packs.
template <class T, class Fn>
void with_pack_elems(bool vector_ok, Fn&& fn) {
  if (vector_ok)
    fn(std::integral_constant<int, pre_map_vector_elems<T>()>{});
  else
    fn(std::integral_constant<int, 1>{});
}

// Calls fn(std::integral_constant<int, K>{}) for K = tokens in {1, 2, 4, 8} up to MaxK (each
// kernel instantiates only the counts it declares as tunable values).
template <int MaxK, class Fn>
void with_token_count(std::int64_t tokens, Fn&& fn) {
  if (tokens == 1) return fn(std::integral_constant<int, 1>{});
  if constexpr (MaxK >= 2)
    if (tokens == 2) return fn(std::integral_constant<int, 2>{});
  if constexpr (MaxK >= 4)
    if (tokens == 4) return fn(std::integral_constant<int, 4>{});
  if constexpr (MaxK >= 8)
    if (tokens == 8) return fn(std::integral_constant<int, 8>{});
  throw std::invalid_argument("tokens per thread/warp must be a power of 2 up to " + std::to_string(MaxK) +
                              ", not " + std::to_string(tokens));
}

// One token's n = 4 fp32 coefficients (h_pre[t, 0..3]), read through the read-only path: the
// threads of a warp that share a token get them in one broadcast transaction.
__device__ __forceinline__ void load_pre_coefficients(const float* h_pre, std::int64_t token,
                                                      float (&h)[kPreMapStreams]) {
#pragma unroll
  for (int i = 0; i < kPreMapStreams; ++i) h[i] = __ldg(h_pre + token * kPreMapStreams + i);
}

// Blocks for `items` work items of one thread each, capped at the grid's x limit (the kernels
// stride over any rest).
inline unsigned pre_map_blocks(std::int64_t items, int threads) {
  const std::int64_t blocks = (items + threads - 1) / threads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 2147483647 ? 2147483647 : blocks));
}

}  // namespace kwb
