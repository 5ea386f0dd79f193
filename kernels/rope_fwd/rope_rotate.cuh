// The fused rotate-half rotation of q and k in one launch, shared by rope_fwd (sin_sign = +1)
// and rope_bwd (sin_sign = -1: the transposed rotation of dq_out and dk_out).
//
// One grid over tokens: block b takes `tokens_per_block` consecutive tokens and all their rows
// (heads of q, then kv_heads of k). It first copies the cos and sin rows of its tokens into
// shared memory (each table row read once per token from global memory, sin already signed),
// then every thread rotates items of E pairs: E consecutive elements of the first half of a
// head (one 16-byte load in bf16 at E = 8) and the E partners D/2 further on (another one).
// So each element of q and k is read once and written once with 16-byte accesses, and the
// tables cost one read per token however many heads share it.
//
// E is the widest pack (16 bytes and down) that divides D/2, so any even head_dim runs: D/2 = 64
// takes 8 bf16 lanes, D/2 = 36 takes 4, D/2 = 65 falls back to scalars. Rows start at multiples
// of D elements and halves at D/2, so E | D/2 keeps every access aligned to its width (the
// tensors themselves come from cudaMalloc, 256-byte aligned).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "harness/catalogue/device_types.cuh"
#include "harness/catalogue/registry.hpp"
#include "kernels/common/fast_div.hpp"
#include "kernels/common/pack_floats.cuh"
#include "kernels/common/vector_pack.cuh"
#include "reference/rope.hpp"

namespace kwb::rope {

inline constexpr int kThreads = 256;
inline constexpr int kMaxUnroll = 4;       // the largest `unroll` tunable (items whose loads go out together)
inline constexpr int kMaxHeadDim = 8192;   // one token's table rows, 2 x 4096 floats, fit in shared
inline constexpr int kMaxTokensPerBlock = 64;
// Defaults of the tunables: about 4 items (2 unrolled loops of 2) per thread.
inline constexpr int kDefaultItemsPerBlock = kThreads * 4;
inline constexpr int kDefaultUnroll = 2;
inline constexpr int kMaxItemsPerBlock = 8192;  // the largest `items` tunable
// 4 blocks of 256 threads per SM at most 64 registers each: half the SM's threads resident, each
// with 2 items (4 x 16 bytes) in flight, about 64 KB of loads in flight per SM.
inline constexpr int kMinBlocksPerSm = 4;

// The item -> (token, row, chunk) split divides by FastDiv (kernels/common/fast_div.hpp): a
// multiply-high and a shift instead of two software divisions (~20 instructions each) on the
// path from one item's stores to the next item's loads.
struct RotateParams {
  const void* q;
  const void* k;
  const float* cos;
  const float* sin;
  const std::int64_t* ids;  // null: positions=index (token s at position s)
  void* q_out;
  void* k_out;
  std::int64_t tokens;      // batch * seq
  int seq;
  std::int64_t table_rows;
  int heads, kv_heads, half;
  int tokens_per_block;
  float sin_sign;
  FastDiv by_per_token;  // (heads + kv_heads) * chunks: items per token
  FastDiv by_chunks;     // half / E: items per row
  FastDiv by_seq;        // seq (fused_v2: a token's position in index mode)
};

// The cos and sin lanes of one item from shared memory: float4 reads when E allows.
template <int E>
__device__ __forceinline__ void load_lanes(const float* src, float (&out)[E]) {
  if constexpr (E % 4 == 0) {
#pragma unroll
    for (int e = 0; e < E; e += 4) {
      const float4 v = *reinterpret_cast<const float4*>(src + e);
      out[e] = v.x, out[e + 1] = v.y, out[e + 2] = v.z, out[e + 3] = v.w;
    }
  } else {
#pragma unroll
    for (int e = 0; e < E; ++e) out[e] = src[e];
  }
}

template <class T, int E, int kUnroll>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm) rope_rotate_kernel(RotateParams p) {
  using P = Pack<T, E>;
  extern __shared__ float4 table_storage[];
  float* table = reinterpret_cast<float*>(table_storage);  // (tokens_per_block, 2, half): cos row, signed sin row
  const int half = p.half;
  const std::int64_t t0 = static_cast<std::int64_t>(blockIdx.x) * p.tokens_per_block;
  const int nt = static_cast<int>(min(static_cast<std::int64_t>(p.tokens_per_block), p.tokens - t0));

  // Items (token, row, chunk): row < heads is a head of q, the rest heads of k.
  const int chunks = half / E;
  const int rows = p.heads + p.kv_heads;
  const int per_token = rows * chunks;
  const int items = nt * per_token;  // < 2^31: see refuse_rotate
  const std::int64_t dim = 2 * static_cast<std::int64_t>(half);
  // Item -> its first-half element in q or k (`src`, and the same offset in the output, `dst`) and
  // its cos lanes in `table` (`lane`).
  auto locate = [&](int item, const T*& src, T*& dst, int& lane) {
    const int tl = p.by_per_token.div(item), rem = item - tl * per_token;
    const int row = p.by_chunks.div(rem), chunk = rem - row * chunks;
    const std::int64_t t = t0 + tl;
    const std::int64_t offset = static_cast<std::int64_t>(chunk) * E;
    if (row < p.heads) {
      const std::int64_t base = (t * p.heads + row) * dim + offset;
      src = static_cast<const T*>(p.q) + base;
      dst = static_cast<T*>(p.q_out) + base;
    } else {
      const std::int64_t base = (t * p.kv_heads + (row - p.heads)) * dim + offset;
      src = static_cast<const T*>(p.k) + base;
      dst = static_cast<T*>(p.k_out) + base;
    }
    lane = tl * 2 * half + chunk * E;
  };
  // Issues the loads of the kUnroll items from `first` on (stride kThreads): both halves of each.
  auto fetch = [&](int first, P (&lo)[kUnroll], P (&hi)[kUnroll]) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int item = first + u * kThreads;
      if (item < items) {
        const T* src;
        T* dst;
        int lane;
        locate(item, src, dst, lane);
        lo[u] = *reinterpret_cast<const P*>(src);
        hi[u] = *reinterpret_cast<const P*>(src + half);
      }
    }
  };
  // The first items' loads go out before the table is staged, so they overlap its latency.
  P lo[kUnroll], hi[kUnroll];
  fetch(threadIdx.x, lo, hi);

  // The table rows of this block's tokens; an id outside the table gives NaN, never a read out
  // of bounds.
  const int first_pos = static_cast<int>(t0 % p.seq);  // index mode: token t0's position
  for (int i = threadIdx.x; i < nt * half; i += kThreads) {
    const int tl = i / half, c = i - tl * half;
    const std::int64_t pos = p.ids ? p.ids[t0 + tl] : (first_pos + tl) % p.seq;
    float cv = NAN, sv = NAN;
    if (pos >= 0 && pos < p.table_rows) {
      cv = p.cos[pos * half + c];
      sv = p.sin[pos * half + c] * p.sin_sign;
    }
    table[tl * 2 * half + c] = cv;
    table[tl * 2 * half + half + c] = sv;
  }
  __syncthreads();  // the only barrier: `table` is written once, then only read

  // Software pipelined: the next round's loads are issued before this round's math and stores,
  // so each thread keeps 2 x kUnroll items of loads in flight instead of none while it computes
  // (Nsight Compute on the unpipelined loop: 0.4 eligible warps per scheduler, 74% of DRAM peak).
  for (int first = threadIdx.x; first < items; first += kThreads * kUnroll) {
    P next_lo[kUnroll], next_hi[kUnroll];
    fetch(first + kThreads * kUnroll, next_lo, next_hi);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int item = first + u * kThreads;
      if (item >= items) continue;
      const T* src;
      T* dst;
      int lane;
      locate(item, src, dst, lane);
      float c[E], s[E];
      load_lanes<E>(table + lane, c);
      load_lanes<E>(table + lane + half, s);
      float x1[E], x2[E], out_lo[E], out_hi[E];
      unpack_floats(lo[u], x1);
      unpack_floats(hi[u], x2);
#pragma unroll
      for (int e = 0; e < E; ++e) {
        out_lo[e] = fmaf(x1[e], c[e], -x2[e] * s[e]);
        out_hi[e] = fmaf(x2[e], c[e], x1[e] * s[e]);
      }
      *reinterpret_cast<P*>(dst) = pack_floats<T, E>(out_lo);
      *reinterpret_cast<P*>(dst + half) = pack_floats<T, E>(out_hi);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {  // as raw words: a Pack<bf16> assignment can go through local memory
      copy_pack(lo[u], next_lo[u]);
      copy_pack(hi[u], next_hi[u]);
    }
  }
}

// Lanes per item: the widest pack of at most 16 bytes whose element count divides half.
inline int lanes_for(std::int64_t half, std::size_t elem_bytes) {
  for (int e = static_cast<int>(16 / elem_bytes); e > 1; e /= 2)
    if (half % e == 0) return e;
  return 1;
}

// Tokens per block: about `items_per_block` items, within the shared-memory budget.
inline int tokens_per_block_for(std::int64_t rows, std::int64_t half, int lanes,
                                std::int64_t items_per_block = kDefaultItemsPerBlock) {
  const std::int64_t per_token = rows * (half / lanes);
  std::int64_t tpb = std::clamp<std::int64_t>(items_per_block / std::max<std::int64_t>(per_token, 1), 1,
                                              kMaxTokensPerBlock);
  while (tpb > 1 && tpb * 2 * half * 4 > 48 * 1024) --tpb;
  return static_cast<int>(tpb);
}

inline std::optional<std::string> refuse_rotate(const Shape& s, DType dtype) {
  const Axes n = Axes::of(s);
  const std::int64_t head_dim = n.head_dim, rows = n.heads + n.kv_heads;
  if (head_dim > kMaxHeadDim)
    return "head_dim above 8192: one token's cos and sin rows no longer fit in shared memory";
  const std::int64_t half = head_dim / 2;
  const int lanes = lanes_for(half, dtype_size(dtype));
  const std::int64_t tpb = tokens_per_block_for(rows, half, lanes);  // the most blocks: the grid's check
  const std::int64_t tpb_most = tokens_per_block_for(rows, half, lanes, kMaxItemsPerBlock);  // the items' check
  if (tpb_most * rows * (half / lanes) > 2147483647 - kThreads * kMaxUnroll)
    return "more than 2^31 items per block: heads x head_dim too large for 32-bit item indices";
  if (n.seq > (1 << 30)) return "seq above 2^30: positions are computed in 32 bits";
  if ((n.tokens() + tpb - 1) / tpb > 2147483647) return "too many tokens for the grid's x dimension";
  return std::nullopt;
}

// The tensors (by the rotation's names) and axes of a case in RotateParams; the split divisors
// and tokens_per_block are the launcher's.
template <class T>
RotateParams rotate_params(const LaunchArgs& a, const Rotation& r) {
  const Axes n = Axes::of(a.shape);
  RotateParams p{};
  p.q = a.tensor<const T>(r.q);
  p.k = a.tensor<const T>(r.k);
  p.cos = a.tensor<const float>("cos");
  p.sin = a.tensor<const float>("sin");
  p.ids = n.ids ? a.tensor<const std::int64_t>("position_ids") : nullptr;
  p.q_out = a.tensor<T>(r.q_out);
  p.k_out = a.tensor<T>(r.k_out);
  p.tokens = n.tokens();
  p.seq = static_cast<int>(n.seq);  // both refusals: seq <= 2^30
  p.by_seq = FastDiv(static_cast<unsigned>(n.seq));
  p.table_rows = n.table_rows();
  p.heads = static_cast<int>(n.heads);
  p.kv_heads = static_cast<int>(n.kv_heads);
  p.half = static_cast<int>(n.half());
  p.sin_sign = r.sin_sign;
  return p;
}

// Launches the rotation (fused_v1 of both directions; the sign is a kernel argument). Defined in
// rope_rotate.cu, so that its kernels are compiled once, not in every file that includes this
// header.
void launch_rotate(const LaunchArgs& a, const Rotation& r);

// The tunables both fused_v1 variants declare (the first value of each is the default).
inline std::vector<Tunable> rotate_tunables() {
  return {{"items", {kDefaultItemsPerBlock, 2048, 4096, kMaxItemsPerBlock},
           "(token, head, lane-pack) items per block: tokens per block = items / items per token"},
          {"unroll", {kDefaultUnroll, 1, 4}, "items per thread whose loads are issued together (1, 2 or 4)"}};
}

}  // namespace kwb::rope
