// The rotate-half rotation of q and k with the cos/sin lanes read straight from the tables
// (through L1) instead of staged in shared memory: fused_v2 of rope_fwd (sin_sign = +1) and
// rope_bwd (sin_sign = -1).
//
// One thread per `items_per_thread` items (token, row, chunk) with chunk fastest, as in
// rope_rotate.cuh, and one short-lived block per 256 x items_per_thread of them: the grid is a
// plain elementwise launch with no barrier, no shared memory and no per-block prologue. A thread
// issues every load it needs (both halves of its items and their cos and sin lanes) before its
// first multiply, so its bytes in flight do not drop while it computes. A token's rows share one
// table row (64 heads x 8 chunks read the same 512 bytes at head_dim 128), so the table reads
// hit L1 after the first warp of a token and cost DRAM one read per token, as staging did.
//
// Why it could beat fused_v1: v1's blocks each stage their tokens' table rows (global loads, a
// shared store, __syncthreads) before their first store, and Nsight Compute showed 0.4 eligible
// warps per scheduler at 74% of the DRAM peak; the pointwise kernel that torch.compile generates
// for rotate-half RoPE (no staging, a thread per element pack) runs ~4% faster kernel for kernel.
// Expected: at the copy wall, >= 93% of the copy ceiling at 1 x 4096 x 32 x 32 x 128 bf16.
// Measured (H100, bf16, 2026-11-23): 48.19 us there against fused_v1's 49.44 (~92% of copy) and
// the Triton kernel's 47.1-47.2 us, 95.9% of copy at 8 x 8192 x 32 x 8 x 128, 104.6 us against
// 113.4 at 2 x 4096 x 64 x 8 x 128 with ids. One or two items per thread measure the same.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/rope_fwd/rope_rotate.cuh"

namespace kwb::rope {

inline constexpr int kDirectDefaultItems = 2;  // the `items_per_thread` default
inline constexpr int kDirectMaxItems = 4;

// E table lanes from global memory through L1 (float4 reads when E allows).
template <int E>
__device__ __forceinline__ void load_table_lanes(const float* src, float (&out)[E]) {
  if constexpr (E % 4 == 0) {
#pragma unroll
    for (int e = 0; e < E; e += 4) {
      const float4 v = __ldg(reinterpret_cast<const float4*>(src + e));
      out[e] = v.x, out[e + 1] = v.y, out[e + 2] = v.z, out[e + 3] = v.w;
    }
  } else {
#pragma unroll
    for (int e = 0; e < E; ++e) out[e] = __ldg(src + e);
  }
}

// Items [0, items) of the tokens from first_token on (at position first_pos = first_token % seq
// in index mode); item -> (token, row, chunk) as in rope_rotate_kernel, every split a FastDiv
// (a 64-bit t % seq was ~40 of the ~220 instructions of an item). p.tokens_per_block is unused.
template <class T, int E, int kItems>
__global__ void __launch_bounds__(kThreads)
    rope_direct_kernel(RotateParams p, std::int64_t first_token, int first_pos, int items) {
  using P = Pack<T, E>;
  const int half = p.half;
  const int chunks = half / E;
  const int rows = p.heads + p.kv_heads;
  const int per_token = rows * chunks;
  const std::int64_t dim = 2 * static_cast<std::int64_t>(half);
  const int base = blockIdx.x * (kThreads * kItems) + threadIdx.x;

  P lo[kItems], hi[kItems];
  float c[kItems][E], s[kItems][E];
  T* dst[kItems];
#pragma unroll
  for (int u = 0; u < kItems; ++u) {
    const int item = base + u * kThreads;
    dst[u] = nullptr;
    if (item >= items) continue;
    const int tl = p.by_per_token.div(item), rem = item - tl * per_token;
    const int row = p.by_chunks.div(rem), chunk = rem - row * chunks;
    const std::int64_t t = first_token + tl;
    const std::int64_t offset = static_cast<std::int64_t>(chunk) * E;
    const T* src;
    if (row < p.heads) {
      const std::int64_t at = (t * p.heads + row) * dim + offset;
      src = static_cast<const T*>(p.q) + at;
      dst[u] = static_cast<T*>(p.q_out) + at;
    } else {
      const std::int64_t at = (t * p.kv_heads + (row - p.heads)) * dim + offset;
      src = static_cast<const T*>(p.k) + at;
      dst[u] = static_cast<T*>(p.k_out) + at;
    }
    lo[u] = *reinterpret_cast<const P*>(src);
    hi[u] = *reinterpret_cast<const P*>(src + half);
    // An id outside the table gives NaN, never a read out of bounds (as fused_v1).
    const int index_pos = first_pos + tl;  // < 2^31: seq <= 2^30 and tl < 2^30 (launch_direct)
    const std::int64_t pos = p.ids ? p.ids[t] : index_pos - p.by_seq.div(index_pos) * p.seq;
    if (pos >= 0 && pos < p.table_rows) {
      load_table_lanes<E>(p.cos + pos * half + offset, c[u]);
      load_table_lanes<E>(p.sin + pos * half + offset, s[u]);
    } else {
#pragma unroll
      for (int e = 0; e < E; ++e) c[u][e] = s[u][e] = NAN;
    }
  }
#pragma unroll
  for (int u = 0; u < kItems; ++u) {
    if (dst[u] == nullptr) continue;
    float x1[E], x2[E], out_lo[E], out_hi[E];
    unpack_floats(lo[u], x1);
    unpack_floats(hi[u], x2);
#pragma unroll
    for (int e = 0; e < E; ++e) {
      const float sn = s[u][e] * p.sin_sign;
      out_lo[e] = fmaf(x1[e], c[u][e], -x2[e] * sn);
      out_hi[e] = fmaf(x2[e], c[u][e], x1[e] * sn);
    }
    *reinterpret_cast<P*>(dst[u]) = pack_floats<T, E>(out_lo);
    *reinterpret_cast<P*>(dst[u] + half) = pack_floats<T, E>(out_hi);
  }
}

inline std::optional<std::string> refuse_direct(const Shape& s, DType dtype) {
  const std::int64_t half = s.at("head_dim") / 2, rows = s.at("heads") + s.at("kv_heads");
  const std::int64_t per_token = rows * (half / lanes_for(half, dtype_size(dtype)));
  if (per_token > (std::int64_t{1} << 30))
    return "more than 2^30 items per token: heads x head_dim too large for 32-bit item indices";
  if (s.at("seq") > (1 << 30)) return "seq above 2^30: positions are computed in 32 bits";
  return std::nullopt;
}

// Launches over the tokens in slices whose items fit 32-bit indices (one launch at LLM sizes).
inline void launch_direct(const LaunchArgs& a, float sin_sign) {
  RotateParams p = rotate_params(a, sin_sign);
  const std::int64_t seq = p.seq;
  const std::int64_t per_thread = a.tunables ? a.tunable("items_per_thread") : kDirectDefaultItems;
  dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    const int lanes = lanes_for(p.half, sizeof(T));
    const std::int64_t per_token = std::int64_t{p.heads + p.kv_heads} * (p.half / lanes);
    p.by_chunks = FastDiv(static_cast<unsigned>(p.half / lanes));
    p.by_per_token = FastDiv(static_cast<unsigned>(per_token));
    // Tokens per launch: items below 2^31 with a block's worth of headroom for the index math,
    // and at most 2^30 tokens so that first_pos + token stays below 2^31.
    const std::int64_t slice = std::clamp<std::int64_t>(
        (std::int64_t{2147483647} - kThreads * kDirectMaxItems) / std::max<std::int64_t>(per_token, 1), 1,
        std::int64_t{1} << 30);
    auto go = [&](auto lanes_tag, auto items_tag) {
      constexpr int E = decltype(lanes_tag)::value, U = decltype(items_tag)::value;
      if constexpr (E * sizeof(T) <= 16) {
        for (std::int64_t t0 = 0; t0 < p.tokens; t0 += slice) {
          const auto items = static_cast<int>(std::min(slice, p.tokens - t0) * per_token);
          const auto blocks = static_cast<unsigned>((items + kThreads * U - 1) / (kThreads * U));
          rope_direct_kernel<T, E, U><<<blocks, kThreads, 0, a.stream>>>(p, t0, static_cast<int>(t0 % seq), items);
        }
      }
    };
    auto by_items = [&](auto lanes_tag) {
      if (per_thread == 4) go(lanes_tag, std::integral_constant<int, 4>{});
      else if (per_thread == 1) go(lanes_tag, std::integral_constant<int, 1>{});
      else go(lanes_tag, std::integral_constant<int, kDirectDefaultItems>{});
    };
    switch (lanes) {
      case 8: by_items(std::integral_constant<int, 8>{}); break;
      case 4: by_items(std::integral_constant<int, 4>{}); break;
      case 2: by_items(std::integral_constant<int, 2>{}); break;
      default: by_items(std::integral_constant<int, 1>{}); break;
    }
  });
}

inline std::vector<Tunable> direct_tunables() {
  return {{"items_per_thread", {kDirectDefaultItems, 1, 4},
           "(token, head, lane-pack) items per thread, all their loads issued before the first multiply"}};
}

}  // namespace kwb::rope
