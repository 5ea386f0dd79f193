// The second fused rotate-half rotation (fused_v2_warp_per_token of rope_fwd and rope_bwd): one
// warp per token, the token's cos and sin read straight into registers, no shared memory and no
// barrier, on a grid-stride grid sized to the resident warps.
//
// Why it should beat v1 (kernels/rope_fwd/rope_rotate.cuh). v1 measured 87.5% of the H100 copy
// ceiling at 1x4096x32x32x128 bf16 (51.4 us, torch.compile 50.5 us) and 65-81% at small heads
// or D/2 = 36. At ~50 us a kernel has little time to amortise per-block costs, and v1 pays them
// all: each block stages its tokens' table rows in shared memory behind a __syncthreads (the
// first loads of q and k overlap the staging, the rest wait for it), divides item indices by
// rows x chunks per item, and runs 4 blocks of 256 threads per SM (register bound), so a block
// retiring leaves a quarter of the SM idle until the next one has staged its table again.
// Here nothing is staged: the table values a lane needs (E cos and E sin for its one column
// slice) are two or four 16-byte loads from L2 per token into registers, issued together with
// the first loads of q and k; warps never wait on each other, so a warp moves on to its next
// token as soon as its stores are issued, and the tail of the grid is one token per warp
// (~10 KB at 40 heads x 128 bf16) instead of a block's ~40 KB.
//
// Layout. A head's D/2 first-half elements are `chunks` = D/2 / E packs of E elements (E from
// lanes_for, as v1: 8 bf16 lanes at D = 128, 4 at D = 72, 1 at odd D/2). lanes_per_row =
// min(chunks, 32) consecutive lanes take one head, the warp takes rows_per_pass = 32 /
// lanes_per_row heads at once (4 at D = 128 bf16), so every load instruction of the warp covers
// whole 128-byte lines: lane l reads x[i..i+E) and x[i+D/2..i+D/2+E) of head l / lanes_per_row.
// Each lane holds the table for its chunk and loops over the token's rows (q's heads, then k's)
// with U rows' loads issued before any math. When chunks > 32 (D/2 > 256 in bf16 and fp16, >
// 128 in fp32, odd D/2 > 32) lanes loop over chunk slots too, reloading the table for each: any
// even head_dim runs (chunks not dividing 32 leaves 32 mod lanes_per_row lanes idle: 5 of 32 at
// D = 72 in bf16). All index math in 64 bits; an id outside the table gives NaN, as v1 does.
//
// Napkin math at 1 x 4096 x 32 x 32 x 128 bf16: q and k are 64 MiB, read once and written once,
// plus 2 MiB of tables (each row read by its token's lanes, the repeats L2 hits) = ~136 MB, 45 us
// at 3034 GB/s. 4096 tokens are 4096 warps: about half a wave
// of the H100's 132 x 64 resident warps, each with U x 2 16-byte loads in flight per lane (32 KB
// per SM at U = 2, above the ~18 KB Little's law asks). Expected: >= 92% of the copy ceiling at
// the default bf16 shapes (49 us or less at the peer-equivalent shape, faster than
// torch.compile's 50.5 us), and no loss at D/2 = 36 beyond the idle lanes (~84% of lanes busy,
// still far from compute bound).
//
// Tunables (the lead sweeps them): unroll U (rows per lane whose loads go out together), waves
// (grid size in waves of resident blocks; 64 = one warp per token, no striding), block (threads
// per block), hints (2: loads that skip L1 with L2 256-byte prefetch and evict-first stores, on
// 16-byte packs only).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "catalogue/device_types.cuh"
#include "catalogue/registry.hpp"
#include "kernels/common/streaming_map.cuh"
#include "kernels/common/vector_pack.cuh"
#include "kernels/rope_fwd/rope_rotate.cuh"
#include "reference/rope.hpp"

namespace kwb::rope {

inline constexpr int kWarpKernelMaxThreads = 256;

struct WarpRotateParams {
  const void* q;
  const void* k;
  const float* cos;
  const float* sin;
  const std::int64_t* ids;  // null: token t sits at position t % seq
  void* q_out;
  void* k_out;
  std::int64_t tokens;      // batch * seq
  std::int64_t seq;
  std::int64_t table_rows;
  int heads, kv_heads, half;
  float sin_sign;
};

// E floats of a table row into registers: float4 loads when E allows (the row offset pos * half
// + chunk * E is then a multiple of 4 floats, since E | half).
template <int E>
__device__ __forceinline__ void load_table_lanes(const float* src, float (&out)[E]) {
  if constexpr (E % 4 == 0) {
#pragma unroll
    for (int e = 0; e < E; e += 4) {
      const float4 v = __ldg(reinterpret_cast<const float4*>(src + e));
      out[e] = v.x, out[e + 1] = v.y, out[e + 2] = v.z, out[e + 3] = v.w;
    }
  } else if constexpr (E == 2) {
    const float2 v = __ldg(reinterpret_cast<const float2*>(src));
    out[0] = v.x, out[1] = v.y;
  } else {
#pragma unroll
    for (int e = 0; e < E; ++e) out[e] = __ldg(src + e);
  }
}

// Left alone, ptxas gives the bf16 E = 8 kernel 104 registers at U = 2 (2 blocks of 256, 16
// warps per SM); at 64 registers it spills 70 bytes. The cap: blocks of 256 threads resident per
// SM, 3 (80 registers, no spills at U = 2) for 16-byte packs, 4 (64) for narrower ones, one
// fewer at U = 4.
template <int PackBytes, int U>
inline constexpr int kWarpKernelMinBlocks = (PackBytes == 16 ? 3 : 4) - (U >= 4 ? 1 : 0);

template <class T, int E, int U, class Access>
__global__ void __launch_bounds__(kWarpKernelMaxThreads, kWarpKernelMinBlocks<E * sizeof(T), U>)
    rope_rotate_warp_kernel(WarpRotateParams p) {
  using P = Pack<T, E>;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int half = p.half;
  const int chunks = half / E;
  const int lanes_per_row = min(chunks, 32);
  const int rows_per_pass = 32 / lanes_per_row;
  const int row_in_pass = lane / lanes_per_row;
  if (row_in_pass >= rows_per_pass) return;  // the 32 mod lanes_per_row idle lanes; no warp-wide ops follow
  const int first_chunk = lane - row_in_pass * lanes_per_row;
  const int rows = p.heads + p.kv_heads;
  const std::int64_t dim = 2 * static_cast<std::int64_t>(half);
  const std::int64_t warps_total = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
  const std::int64_t first_warp = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;

  for (std::int64_t t = first_warp; t < p.tokens; t += warps_total) {
    const std::int64_t pos = p.ids ? p.ids[t] : t % p.seq;
    const bool valid = pos >= 0 && pos < p.table_rows;
    const T* q = static_cast<const T*>(p.q) + t * p.heads * dim;
    const T* k = static_cast<const T*>(p.k) + t * p.kv_heads * dim;
    T* q_out = static_cast<T*>(p.q_out) + t * p.heads * dim;
    T* k_out = static_cast<T*>(p.k_out) + t * p.kv_heads * dim;
    for (int chunk = first_chunk; chunk < chunks; chunk += lanes_per_row) {
      const std::int64_t col = static_cast<std::int64_t>(chunk) * E;
      float c[E], s[E];
      if (valid) {
        load_table_lanes<E>(p.cos + pos * half + col, c);
        load_table_lanes<E>(p.sin + pos * half + col, s);
      } else {
#pragma unroll
        for (int e = 0; e < E; ++e) c[e] = s[e] = NAN;
      }
#pragma unroll
      for (int e = 0; e < E; ++e) s[e] *= p.sin_sign;

      for (int r0 = row_in_pass; r0 < rows; r0 += rows_per_pass * U) {
        P lo[U], hi[U];
        T* dst[U];
        // All U rows' loads first, then the math and stores.
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const int r = r0 + u * rows_per_pass;
          dst[u] = nullptr;
          if (r < rows) {
            const bool is_q = r < p.heads;
            const std::int64_t offset = static_cast<std::int64_t>(is_q ? r : r - p.heads) * dim + col;
            const T* src = (is_q ? q : k) + offset;
            dst[u] = (is_q ? q_out : k_out) + offset;
            lo[u] = Access::load(reinterpret_cast<const P*>(src));
            hi[u] = Access::load(reinterpret_cast<const P*>(src + half));
          }
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
          if (dst[u] == nullptr) continue;
          P out_lo, out_hi;
#pragma unroll
          for (int e = 0; e < E; ++e) {
            const float x1 = to_float(lo[u].v[e]), x2 = to_float(hi[u].v[e]);
            out_lo.v[e] = from_float<T>(fmaf(x1, c[e], -x2 * s[e]));
            out_hi.v[e] = from_float<T>(fmaf(x2, c[e], x1 * s[e]));
          }
          Access::store(reinterpret_cast<P*>(dst[u]), out_lo);
          Access::store(reinterpret_cast<P*>(dst[u] + half), out_hi);
        }
      }
    }
  }
}

// The tunables both v2 variants declare (the first value of each is the default).
inline std::vector<Tunable> warp_rotate_tunables() {
  return {{"unroll", {2, 1, 4}, "rows of q/k per lane whose 16-byte loads are issued before the math"},
          {"waves", {1, 2, 4, 64}, "grid size in waves of resident blocks (at most; never more warps than tokens)"},
          {"block", {256, 128}, "threads per block (8 or 4 warps, one token each at a time)"},
          {"hints", {1, 2}, "1: plain loads and stores; 2: L1-bypassing loads with 256-byte L2 prefetch and evict-first stores (16-byte packs)"}};
}

// Launches the warp-per-token rotation with the op's tensor order (reference/rope.hpp).
inline void launch_rotate_warp(const LaunchArgs& a, float sin_sign) {
  const bool ids = a.shape.choice("positions") == "ids";
  const std::int64_t seq = a.shape.at("seq");
  WarpRotateParams p{};
  p.q = a.tensors[kQ];
  p.k = a.tensors[kK];
  p.cos = static_cast<const float*>(a.tensors[kCos]);
  p.sin = static_cast<const float*>(a.tensors[kSin]);
  p.ids = ids ? static_cast<const std::int64_t*>(a.tensors[kIds]) : nullptr;
  p.q_out = a.tensors[first_output(ids)];
  p.k_out = a.tensors[first_output(ids) + 1];
  p.tokens = a.shape.at("batch") * seq;
  p.seq = seq;
  p.table_rows = table_rows(seq, ids);
  p.heads = static_cast<int>(a.shape.at("heads"));
  p.kv_heads = static_cast<int>(a.shape.at("kv_heads"));
  p.half = static_cast<int>(a.shape.at("head_dim") / 2);
  p.sin_sign = sin_sign;
  if (p.tokens <= 0) return;
  const int unroll = static_cast<int>(a.tunable("unroll"));
  const int waves = static_cast<int>(std::max<std::int64_t>(a.tunable("waves"), 1));
  const int threads = std::clamp(static_cast<int>(a.tunable("block")) / 32 * 32, 32, kWarpKernelMaxThreads);
  const bool hints = a.tunable("hints") == 2;

  dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    auto go = [&](auto lanes_tag, auto unroll_tag, auto access_tag) {
      constexpr int E = decltype(lanes_tag)::value;
      constexpr int U = decltype(unroll_tag)::value;
      using Access = typename decltype(access_tag)::type;
      if constexpr (E * sizeof(T) <= 16) {
        const auto kernel = rope_rotate_warp_kernel<T, E, U, Access>;
        int device = 0, sms = 1, per_sm = 1;
        cudaGetDevice(&device);
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0);
        const std::int64_t resident = std::int64_t{std::max(sms, 1)} * std::max(per_sm, 1) * waves;
        const int warps_per_block = threads / 32;
        const std::int64_t need = (p.tokens + warps_per_block - 1) / warps_per_block;
        const auto blocks = static_cast<unsigned>(std::clamp<std::int64_t>(need, 1, std::min<std::int64_t>(resident, 2147483647)));
        kernel<<<blocks, threads, 0, a.stream>>>(p);
      }
    };
    auto with_access = [&](auto lanes_tag, auto unroll_tag) {
      constexpr int E = decltype(lanes_tag)::value;
      // The hinted access moves 16-byte packs only; narrower packs always load plainly.
      if constexpr (E * sizeof(T) == 16) {
        if (hints) return go(lanes_tag, unroll_tag, std::type_identity<StreamingHintAccess>{});
      }
      go(lanes_tag, unroll_tag, std::type_identity<PlainAccess>{});
    };
    auto with_unroll = [&](auto lanes_tag) {
      switch (unroll) {
        case 1: with_access(lanes_tag, std::integral_constant<int, 1>{}); break;
        case 4: with_access(lanes_tag, std::integral_constant<int, 4>{}); break;
        default: with_access(lanes_tag, std::integral_constant<int, 2>{}); break;
      }
    };
    switch (lanes_for(p.half, sizeof(T))) {
      case 8: with_unroll(std::integral_constant<int, 8>{}); break;
      case 4: with_unroll(std::integral_constant<int, 4>{}); break;
      case 2: with_unroll(std::integral_constant<int, 2>{}); break;
      default: with_unroll(std::integral_constant<int, 1>{}); break;
    }
  });
}

// Every even head_dim runs (lanes loop over chunk slots past 32); the limits left are int sizes.
inline std::optional<std::string> refuse_rotate_warp(const Shape& s, DType) {
  if (s.at("heads") + s.at("kv_heads") > 2147483647 - 64)
    return "heads + kv_heads above 2^31: row indices are 32-bit (use fused_v1_vec16_shared_table)";
  if (s.at("head_dim") / 2 > 2147483647 / 2)
    return "head_dim above 2^31: column indices are 32-bit (use fused_v1_vec16_shared_table)";
  return std::nullopt;
}

}  // namespace kwb::rope
