// mean_pooling_fwd fused_v2_whole_rows_counted_slices: fused_v1 (kept tokens only, 16-byte packs,
// token slices with fp32 partials added in slice order) with three changes, each from fused_v1's
// profile (2026-11-26 and 2026-11-28 notebooks):
//   - The combine was up to 19 us of 302 (b4 s32768 d4096): each of its blocks counted the whole
//     sequence's mask again, and each thread added 132 slices one after the other. Here the slices
//     count their kept rows as they skip (the popcount of the mask bits they read anyway), and the
//     combine spreads a column's slices over 8 warps, summed in a fixed order (deterministic).
//   - A block may take `packs` 16-byte packs a thread, 128 x packs x 16 bytes of each row: a whole
//     8 KiB bf16 row of d 4096 at 4, so that the row is read by one block at once rather than in
//     2 KiB pieces by four blocks at different times.
//   - x is read with ld.global.nc.L1::no_allocate and an L2 evict_first policy: it is read once,
//     so it replaces its own lines in the L2 first and leaves resident what the L2 held before.
// Rows in flight a thread: 8 packs in all (8 rows of 1 pack, 4 of 2, 2 of 4), as fused_v1's 8.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/multiprocessors.hpp"
#include "kernels/common/vector_pack.cuh"
#include "kernels/mean_pooling_fwd/token_slices.cuh"
#include "reference/mean_pooling.hpp"

namespace kwb {
namespace {

using pooling::kThreads;
constexpr int kPacksInFlight = 8;

__device__ __forceinline__ std::uint64_t l2_evict_first() {
  std::uint64_t policy;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// A pack of x read once: 16 bytes through the non-coherent path, no L1 line, L2 evict_first.
template <class T, int E>
__device__ __forceinline__ Pack<T, E> load_once(const T* src, std::uint64_t policy) {
  Pack<T, E> p;
  if constexpr (sizeof(Pack<T, E>) == 16) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(src), "l"(policy));
    p = *reinterpret_cast<const Pack<T, E>*>(&v);
  } else {
    p = *reinterpret_cast<const Pack<T, E>*>(src);
  }
  return p;
}

// Block (column block, slice, sequence): thread t sums packs t, t + 128, ... (Packs of them) of
// each kept row of its slice into fp32; the block's column block 0 also writes the slice's count.
template <class T, int E, int Packs>
__global__ void __launch_bounds__(kThreads)
    pool_slices(const T* __restrict__ x, const bool* __restrict__ mask, float* __restrict__ partial,
                int* __restrict__ counts, std::int64_t seq, std::int64_t hidden, std::int64_t rows_per_slice) {
  constexpr int Rows = kPacksInFlight / Packs, kStride = kThreads * E;
  const std::int64_t col = blockIdx.x * std::int64_t{kStride} * Packs + threadIdx.x * E;
  const std::int64_t b = blockIdx.z, slice = blockIdx.y, slices = gridDim.y;
  const std::int64_t first = slice * rows_per_slice, last = std::min(seq, first + rows_per_slice);
  const std::uint64_t policy = l2_evict_first();
  float acc[Packs][E] = {};
  int kept_rows = 0;
  const bool* m = mask + b * seq;
  const T* xb = x + b * seq * hidden + col;
  bool live[Packs];
#pragma unroll
  for (int k = 0; k < Packs; ++k) live[k] = col + k * kStride < hidden;
  // The next group's mask bits are read while this group's rows are in flight.
  unsigned kept = pooling::kept_bits<Rows>(m, first, last);
  for (std::int64_t s0 = first; s0 < last; s0 += Rows) {
    Pack<T, E> rows[Rows][Packs];
#pragma unroll
    for (int r = 0; r < Rows; ++r)
#pragma unroll
      for (int k = 0; k < Packs; ++k)
        if ((kept & (1u << r)) && live[k]) rows[r][k] = load_once<T, E>(xb + (s0 + r) * hidden + k * kStride, policy);
    const unsigned next = pooling::kept_bits<Rows>(m, s0 + Rows, last);
    kept_rows += __popc(kept);
#pragma unroll
    for (int r = 0; r < Rows; ++r)
      if (kept & (1u << r))
#pragma unroll
        for (int k = 0; k < Packs; ++k)
#pragma unroll
          for (int e = 0; e < E; ++e) acc[k][e] += to_float(rows[r][k].v[e]);
    kept = next;
  }
  float* out = partial + (b * slices + slice) * hidden + col;
#pragma unroll
  for (int k = 0; k < Packs; ++k)
    if (live[k])
#pragma unroll
      for (int e = 0; e < E; ++e) out[k * kStride + e] = acc[k][e];
  if (blockIdx.x == 0 && threadIdx.x == 0) counts[b * slices + slice] = kept_rows;
}

// y[b, c] = (sum of the slices' partials) / max(n_b, 1), n_b the sum of the slices' counts. Block
// (32 columns, sequence) of 8 warps: warp w adds slices w, w + 8, ... of its lane's column, and
// warp 0 adds the 8 warps' sums in warp order (the same order every launch).
constexpr int kCombineWarps = 8;

template <class T>
__global__ void __launch_bounds__(kCombineWarps * 32)
    combine_slices(const float* __restrict__ partial, const int* __restrict__ counts, T* __restrict__ y,
                   std::int64_t hidden, int slices) {
  __shared__ float sums[kCombineWarps][32];
  __shared__ float inv_count;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::int64_t b = blockIdx.y, c = blockIdx.x * std::int64_t{32} + lane;
  float sum = 0;
  if (c < hidden) {
#pragma unroll 4
    for (int s = warp; s < slices; s += kCombineWarps) sum += partial[(b * slices + s) * hidden + c];
  }
  sums[warp][lane] = sum;
  if (warp == 0) {
    int n = 0;
    for (int s = lane; s < slices; s += 32) n += counts[b * slices + s];
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) n += __shfl_xor_sync(0xffffffffu, n, offset);
    if (lane == 0) inv_count = 1.0f / static_cast<float>(std::max(n, 1));
  }
  __syncthreads();
  if (warp != 0 || c >= hidden) return;
  float total = 0;
#pragma unroll
  for (int w = 0; w < kCombineWarps; ++w) total += sums[w][lane];
  y[b * hidden + c] = from_float<T>(total * inv_count);
}

std::int64_t block_columns(int pack, int packs) { return std::int64_t{kThreads} * pack * packs; }

template <class T, int E, int Packs>
void pool(const LaunchArgs& a, const PoolingAxes& p) {
  const std::int64_t slices =
      pooling::slices_for(p, block_columns(E, Packs), std::min(multiprocessor_count(), pooling::kMostMultiprocessors),
                          a.tunable("blocks_per_sm"));
  const std::int64_t rows_per_slice = (p.seq + slices - 1) / slices;
  float* partial = static_cast<float*>(a.workspace);
  int* counts = reinterpret_cast<int*>(partial + p.batch * slices * p.hidden);
  const dim3 grid(static_cast<unsigned>((p.hidden + block_columns(E, Packs) - 1) / block_columns(E, Packs)),
                  static_cast<unsigned>(slices), static_cast<unsigned>(p.batch));
  pool_slices<T, E, Packs><<<grid, kThreads, 0, a.stream>>>(a.tensor<const T>("x"), a.tensor<const bool>("mask"),
                                                             partial, counts, p.seq, p.hidden, rows_per_slice);
  const dim3 combine(static_cast<unsigned>((p.hidden + 31) / 32), static_cast<unsigned>(p.batch));
  combine_slices<T><<<combine, kCombineWarps * 32, 0, a.stream>>>(partial, counts, a.tensor<T>("y"), p.hidden,
                                                                 static_cast<int>(slices));
}

template <class T, int E>
void with_packs(const LaunchArgs& a, const PoolingAxes& p) {
  switch (a.tunable("packs")) {
    case 1: return pool<T, E, 1>(a, p);
    case 2: return pool<T, E, 2>(a, p);
    default: return pool<T, E, 4>(a, p);
  }
}

template <class T>
void launch_typed(const LaunchArgs& a) {
  const PoolingAxes p = PoolingAxes::of(a.shape);
  constexpr int kPack = 16 / sizeof(T);
  if (pooling::pack_for(p.hidden, a.dtype) == kPack)
    with_packs<T, kPack>(a, p);
  else
    with_packs<T, 1>(a, p);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mean_pooling_fwd",
    .name = "fused_v2_whole_rows_counted_slices",
    .role = Role::fused,
    .description = "fused_v1 with the slices counting their kept rows, a combine that spreads the slices over 8 "
                   "warps, up to whole rows a block, x read once with no L1 line and L2 evict_first",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse =
        [](const Shape& s, DType) -> std::optional<std::string> {
          if (s.at("batch") > 65535) return "batch above 65535 exceeds the grid's z dimension";
          return std::nullopt;
        },
    .workspace_bytes =
        [](const Shape& s, DType dtype) {
          const PoolingAxes p = PoolingAxes::of(s);
          // The most slices: the widest blocks (fewest along the columns), the most a multiprocessor.
          const std::int64_t slices = pooling::slices_for(p, block_columns(pooling::pack_for(p.hidden, dtype), 4),
                                                          pooling::kMostMultiprocessors, pooling::kMostBlocksPerSm);
          return static_cast<std::size_t>(p.batch * slices) * (static_cast<std::size_t>(p.hidden) * sizeof(float) +
                                                                sizeof(int));
        },
    .tunables = {{"packs", {1, 2, 4}, "16-byte packs of a row a thread reads (4: a whole 8 KiB bf16 row of d 4096 a block)"},
                 {"blocks_per_sm",
                  {std::begin(pooling::kBlocksPerSmValues), std::end(pooling::kBlocksPerSmValues)},
                  "blocks of 128 threads a multiprocessor the token slices aim at"}},
});

}  // namespace
}  // namespace kwb
