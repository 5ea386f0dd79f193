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
// Measured: docs/results.md (one or two items per thread measure the same).
//
// fused_v3 (launch_per_pack) is Triton's mapping in this kernel's template: one output pack per
// thread (it loads its own half and the partner half, which hits L1 or merges with the
// neighbour's load, and stores one 16-byte pack, so a warp's store is one contiguous 512-byte
// run), 128-thread blocks, 32 registers and full occupancy; every q item first, then every k item
// (tensor-major: one input and one output stream at a time); the tables and the partner half read
// with L1 and L2 evict_last hints (Triton's hints), so the streamed q/k lines do not evict them.
// A sweep of these knobs through kwb (H100, bf16) found this combination the fastest at both
// default shapes it was tried on (measured: docs/results.md); tensor-major order alone was
// slower: it pays only with one pack per thread. q/k loads with an L2 evict_first policy,
// ld.global.nc.L1::no_allocate and evict_first stores did not help and were dropped; 512-thread
// blocks measured as 256.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/rope_fwd/rope_rotate.cuh"

namespace kwb::rope {

inline constexpr int kDirectDefaultItems = 2;  // the `items_per_thread` default
inline constexpr int kDirectMaxItems = 4;

// The knobs' values (see the header); the first of each is the default.
inline constexpr int kOrderTokenMajor = 1, kOrderTensorMajor = 2;
inline constexpr int kCacheDefault = 1, kCacheTablesLast = 2;

// What the tensor-major order needs beyond RotateParams (the token-major kernel reads none of it).
struct DirectSplit {
  FastDiv by_heads;     // order 2: a q row (token x heads + head) -> its token
  FastDiv by_kv_heads;  // order 2: a k row -> its token
  int q_items = 0;      // order 2: the launch's q items, which come first
};

__device__ __forceinline__ std::uint64_t l2_policy_evict_last() {
  std::uint64_t p;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}
// 16-byte loads with cache hints (the inputs are not written by the kernel, so the
// non-volatile asm may be scheduled like any load).
template <class V>
__device__ __forceinline__ V from_words(const uint4& w) {
  static_assert(sizeof(V) == 16);
  V v;
  memcpy(&v, &w, 16);
  return v;
}
// A 16-byte load with L1 and L2 evict_last hints; kReadOnly: through the non-coherent
// (read-only) path, as __ldg.
template <bool kReadOnly, class V>
__device__ __forceinline__ V ld16_evict_last(const V* ptr, std::uint64_t policy) {
  uint4 w;
  if constexpr (kReadOnly)
    asm("ld.global.nc.L1::evict_last.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
        : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w) : "l"(ptr), "l"(policy));
  else
    asm("ld.global.L1::evict_last.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
        : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w) : "l"(ptr), "l"(policy));
  return from_words<V>(w);
}

// E table lanes from global memory through L1 (float4 reads when E allows), with L1 and L2
// evict_last hints (`policy`) at kCacheTablesLast.
template <int E, int kCache = kCacheDefault>
__device__ __forceinline__ void load_table_lanes(const float* src, float (&out)[E],
                                                 [[maybe_unused]] std::uint64_t policy = 0) {
  if constexpr (E % 4 == 0) {
#pragma unroll
    for (int e = 0; e < E; e += 4) {
      float4 v;
      if constexpr (kCache == kCacheTablesLast)
        v = ld16_evict_last<true>(reinterpret_cast<const float4*>(src + e), policy);
      else
        v = __ldg(reinterpret_cast<const float4*>(src + e));
      out[e] = v.x, out[e + 1] = v.y, out[e + 2] = v.z, out[e + 3] = v.w;
    }
  } else {
    static_assert(kCache == kCacheDefault, "the cache hints are compiled for float4 table reads only");
#pragma unroll
    for (int e = 0; e < E; ++e) out[e] = __ldg(src + e);
  }
}

// The partner half a thread reads but does not store (halves 1): evict_last as the tables.
template <int kCache, class P>
__device__ __forceinline__ P load_partner(const P* ptr, [[maybe_unused]] std::uint64_t last) {
  if constexpr (kCache == kCacheTablesLast) return ld16_evict_last<false>(ptr, last);
  else return *ptr;
}

// Items [0, items) of the tokens from first_token on (at position first_pos = first_token % seq
// in index mode); item -> (token, row, chunk) as in rope_rotate_kernel, every split a FastDiv
// (a 64-bit t % seq was ~40 of the ~220 instructions of an item). p.tokens_per_block is unused.
// p.by_chunks divides by the items of one row (chunks, or 2 x chunks at halves 1) and
// p.by_per_token by the items of one token. At order 2 the launch's q items (token, head, unit)
// come first, then its k items, and `x` splits them. The template arguments after kItems are
// the mapping (the header); at their defaults this is fused_v2's kernel.
template <class T, int E, int kItems, int kBlock = kThreads, int kOrder = kOrderTokenMajor,
          int kCache = kCacheDefault, int kHalves = 2>
__global__ void __launch_bounds__(kBlock)
    rope_direct_kernel(RotateParams p, DirectSplit x, std::int64_t first_token, int first_pos, int items) {
  using P = Pack<T, E>;
  static_assert(kHalves == 1 || kHalves == 2);
  static_assert(kCache == kCacheDefault || sizeof(P) == 16, "the cache hints are compiled for 16-byte packs only");
  const int half = p.half;
  const int chunks = half / E;
  const int units = kHalves == 2 ? chunks : 2 * chunks;  // items per row
  const int rows = p.heads + p.kv_heads;
  const int per_token = rows * units;
  const std::int64_t dim = 2 * static_cast<std::int64_t>(half);
  const int base = blockIdx.x * (kBlock * kItems) + threadIdx.x;
  [[maybe_unused]] std::uint64_t pol_last = 0;
  if constexpr (kCache == kCacheTablesLast) pol_last = l2_policy_evict_last();

  // halves 2: lo, hi = the two halves; halves 1: lo = the thread's own half, hi = its partner.
  P lo[kItems], hi[kItems];
  float c[kItems][E], s[kItems][E];
  T* dst[kItems];
  [[maybe_unused]] float sign[kItems];  // halves 1: the sign of the partner's sin term
#pragma unroll
  for (int u = 0; u < kItems; ++u) {
    const int item = base + u * kBlock;
    dst[u] = nullptr;
    if (item >= items) continue;
    // The cos and sin lanes of item u at token first_token + tl, chunk offset `offset`.
    auto load_tables = [&](int tl, std::int64_t t, std::int64_t offset) {
      // An id outside the table gives NaN, never a read out of bounds (as fused_v1).
      const int index_pos = first_pos + tl;  // < 2^31: seq <= 2^30 and tl < 2^30 (launch_direct)
      const std::int64_t pos = p.ids ? p.ids[t] : index_pos - p.by_seq.div(index_pos) * p.seq;
      if (pos >= 0 && pos < p.table_rows) {
        load_table_lanes<E, kCache>(p.cos + pos * half + offset, c[u], pol_last);
        load_table_lanes<E, kCache>(p.sin + pos * half + offset, s[u], pol_last);
      } else {
#pragma unroll
        for (int e = 0; e < E; ++e) c[u][e] = s[u][e] = NAN;
      }
    };
    if constexpr (kOrder == kOrderTokenMajor && kHalves == 2) {  // the measured kernel's split
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
      load_tables(tl, t, offset);
    } else {
      // The item's token (tl from first_token), tensor (in_q), head in that tensor and unit.
      int tl, head, unit;
      bool in_q;
      if constexpr (kOrder == kOrderTokenMajor) {
        tl = p.by_per_token.div(item);
        const int rem = item - tl * per_token;
        const int row = p.by_chunks.div(rem);
        unit = rem - row * units;
        in_q = row < p.heads;
        head = in_q ? row : row - p.heads;
      } else {
        in_q = item < x.q_items;
        const int li = in_q ? item : item - x.q_items;
        const int r = p.by_chunks.div(li);  // the row among the launch's rows of this tensor
        unit = li - r * units;
        tl = (in_q ? x.by_heads : x.by_kv_heads).div(r);
        head = r - tl * (in_q ? p.heads : p.kv_heads);
      }
      const std::int64_t t = first_token + tl;
      // halves 2: unit = chunk; halves 1: unit = h x chunks + chunk, the pack at unit x E of the
      // row, in half h.
      const bool upper = kHalves == 1 && unit >= chunks;
      const int chunk = upper ? unit - chunks : unit;
      const std::int64_t at = (t * (in_q ? p.heads : p.kv_heads) + head) * dim + static_cast<std::int64_t>(unit) * E;
      const T* src = static_cast<const T*>(in_q ? p.q : p.k) + at;
      dst[u] = static_cast<T*>(in_q ? p.q_out : p.k_out) + at;
      if constexpr (kHalves == 2) {
        lo[u] = *reinterpret_cast<const P*>(src);
        hi[u] = *reinterpret_cast<const P*>(src + half);
      } else {
        sign[u] = upper ? p.sin_sign : -p.sin_sign;
        lo[u] = *reinterpret_cast<const P*>(src);
        hi[u] = load_partner<kCache>(reinterpret_cast<const P*>(upper ? src - half : src + half), pol_last);
      }
      load_tables(tl, t, static_cast<std::int64_t>(chunk) * E);
    }
  }
#pragma unroll
  for (int u = 0; u < kItems; ++u) {
    if (dst[u] == nullptr) continue;
    float x1[E], x2[E], out_lo[E], out_hi[E];
    unpack_floats(lo[u], x1);
    unpack_floats(hi[u], x2);
    if constexpr (kHalves == 2) {
#pragma unroll
      for (int e = 0; e < E; ++e) {
        const float sn = s[u][e] * p.sin_sign;
        out_lo[e] = fmaf(x1[e], c[u][e], -x2[e] * sn);
        out_hi[e] = fmaf(x2[e], c[u][e], x1[e] * sn);
      }
      *reinterpret_cast<P*>(dst[u]) = pack_floats<T, E>(out_lo);
      *reinterpret_cast<P*>(dst[u] + half) = pack_floats<T, E>(out_hi);
    } else {
      // own x c + partner x (+-sin): the same products, bit for bit, as halves 2's out_lo (lower
      // half: -sin) and out_hi (upper: +sin).
#pragma unroll
      for (int e = 0; e < E; ++e) out_lo[e] = fmaf(x1[e], c[u][e], x2[e] * (s[u][e] * sign[u]));
      *reinterpret_cast<P*>(dst[u]) = pack_floats<T, E>(out_lo);
    }
  }
}

// items_per_pair: 1 item per chunk pair (fused_v2), 2 (fused_v3: one per output pack).
inline std::optional<std::string> refuse_items(const Shape& s, DType dtype, int items_per_pair) {
  const Axes n = Axes::of(s);
  const std::int64_t half = n.half(), rows = n.heads + n.kv_heads;
  const std::int64_t per_token = rows * items_per_pair * (half / lanes_for(half, dtype_size(dtype)));
  if (per_token > (std::int64_t{1} << 30))
    return "more than 2^30 items per token: heads x head_dim too large for 32-bit item indices";
  if (n.seq > (1 << 30)) return "seq above 2^30: positions are computed in 32 bits";
  return std::nullopt;
}
inline std::optional<std::string> refuse_direct(const Shape& s, DType dtype) { return refuse_items(s, dtype, 1); }
inline std::optional<std::string> refuse_per_pack(const Shape& s, DType dtype) { return refuse_items(s, dtype, 2); }

// One kernel over the tokens in slices whose items fit 32-bit indices (one launch at LLM sizes).
// kHalves: items per row pair (2: a thread rotates both halves of a chunk pair, 1: one pack).
template <int kHalves, class T, class Kernel>
void launch_slices(const LaunchArgs& a, RotateParams p, int lanes, Kernel kernel, int block, int per_thread) {
  const int units = kHalves == 1 ? 2 * (p.half / lanes) : p.half / lanes;
  const std::int64_t per_token = std::int64_t{p.heads + p.kv_heads} * units;
  if (per_token > (std::int64_t{1} << 30))  // one pack per item doubles refuse_direct's count
    throw std::invalid_argument("rope: more than 2^30 items per token");
  p.by_chunks = FastDiv(static_cast<unsigned>(units));
  p.by_per_token = FastDiv(static_cast<unsigned>(per_token));
  DirectSplit x;
  x.by_heads = FastDiv(static_cast<unsigned>(p.heads));
  x.by_kv_heads = FastDiv(static_cast<unsigned>(p.kv_heads));
  // Tokens per launch: items below 2^31 with a block's worth of headroom for the index math,
  // and at most 2^30 tokens so that first_pos + token stays below 2^31.
  const std::int64_t headroom = std::max(kThreads * kDirectMaxItems, block * per_thread);
  const std::int64_t slice = std::clamp<std::int64_t>(
      (std::int64_t{2147483647} - headroom) / std::max<std::int64_t>(per_token, 1), 1, std::int64_t{1} << 30);
  for (std::int64_t t0 = 0; t0 < p.tokens; t0 += slice) {
    const std::int64_t n = std::min(slice, p.tokens - t0);
    const auto items = static_cast<int>(n * per_token);
    x.q_items = static_cast<int>(n * p.heads * units);
    const auto blocks = static_cast<unsigned>((items + block * per_thread - 1) / (block * per_thread));
    kernel<<<blocks, block, 0, a.stream>>>(p, x, t0, static_cast<int>(t0 % p.seq), items);
  }
}

// fn(integral_constant<int, E>{}, lanes) for the E lanes of a pack of T at this row width
// (16 bytes where the half row allows, else narrower).
template <class T, class Fn>
void with_pack(const RotateParams& p, Fn&& fn) {
  const int lanes = lanes_for(p.half, sizeof(T));
  auto go = [&](auto lanes_tag) {
    if constexpr (decltype(lanes_tag)::value * sizeof(T) <= 16) fn(lanes_tag, lanes);
  };
  switch (lanes) {
    case 8: go(std::integral_constant<int, 8>{}); break;
    case 4: go(std::integral_constant<int, 4>{}); break;
    case 2: go(std::integral_constant<int, 2>{}); break;
    default: go(std::integral_constant<int, 1>{}); break;
  }
}

// The launchers dispatch the dtype themselves, as rope_rotate.cuh's launch_rotate does; each is
// defined in a file of its own (rope_direct.cu, rope_per_pack.cu), where its kernels are compiled.

// fused_v2: token-major items of both halves of a chunk pair, `items_per_thread` per thread.
void launch_direct(const LaunchArgs& a, const Rotation& r);

// fused_v3: one output pack per thread, 128-thread blocks, tensor-major, tables and partner
// halves evict_last (16-byte packs; narrower packs, e.g. fp32 at head_dim 4, without hints).
inline constexpr int kPerPackThreads = 128;
void launch_per_pack(const LaunchArgs& a, const Rotation& r);

inline std::vector<Tunable> direct_tunables() {
  return {{"items_per_thread", {kDirectDefaultItems, 1, 4},
           "(token, head, lane-pack) items per thread, all their loads issued before the first multiply"}};
}

}  // namespace kwb::rope
