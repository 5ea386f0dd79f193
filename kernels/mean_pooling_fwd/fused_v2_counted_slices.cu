// mean_pooling_fwd fused_v2_counted_slices: fused_v1 (kept tokens only, 16-byte packs, token
// slices with fp32 partials added in slice order by a second kernel) with its combine made cheap,
// from fused_v1's profile (2026-11-27 notebook): the combine was 6-19 us of 159-302 at the large
// shapes (b4 s32768 d4096: 19 us), because each of its blocks counted the whole sequence's mask
// again and each thread added up to 132 slices one after the other.
//   - The slices count their kept rows as they skip (the popcount of the mask bits they read
//     anyway); the combine adds the counts.
//   - The combine spreads a column's slices over up to 8 warps, added in warp order (the same
//     order every launch: deterministic, no atomics).
//   - It is a programmatic dependent launch (dependent_launch.cuh), allowed by each slice block as
//     it ends: its blocks are resident as the last wave of slices drains, so the gap between the
//     two kernels closes. (Allowed at the start, the waiting combine blocks took the slots of the
//     slices' later waves: the slices ran 5-9% slower.)
//   - `packs`: 16-byte packs of a row a thread reads (its 8 loads in flight: 8 rows of 1 pack, 4
//     of 2, 2 of 4). One wins where the hidden size takes 16-byte packs; where it does not (single
//     elements), 4 elements a thread do.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/dependent_launch.cuh"
#include "kernels/common/multiprocessors.hpp"
#include "kernels/common/vector_pack.cuh"
#include "kernels/mean_pooling_fwd/token_slices.cuh"
#include "reference/mean_pooling.hpp"

namespace kwb {
namespace {

using pooling::kThreads;
constexpr int kPacksInFlight = 8;

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
        if ((kept & (1u << r)) && live[k]) rows[r][k] = *reinterpret_cast<const Pack<T, E>*>(xb + (s0 + r) * hidden + k * kStride);
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
  // Only now may the combine launch: the dependent grid starts once every block of this one has
  // called this (or ended), so its blocks, waiting, never hold slots this grid's later waves need.
  allow_dependent_launch();
}

// y[b, c] = (sum of the slices' partials) / max(n_b, 1), n_b the sum of the slices' counts. Block
// (32 columns, sequence) of `warps` warps (at most kCombineWarps): warp w adds slices w, w + warps,
// ... of its lane's column, and warp 0 adds the warps' sums in warp order.
constexpr int kCombineWarps = 8;

template <class T>
__global__ void __launch_bounds__(kCombineWarps * 32)
    combine_slices(const float* __restrict__ partial, const int* __restrict__ counts, T* __restrict__ y,
                   std::int64_t hidden, int slices) {
  __shared__ float sums[kCombineWarps][32];
  __shared__ float inv_count;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const std::int64_t b = blockIdx.y, c = blockIdx.x * std::int64_t{32} + lane;
  wait_for_previous_grid();  // every slice's partials and count written
  float sum = 0;
  if (c < hidden) {
#pragma unroll 4
    for (int s = warp; s < slices; s += warps) sum += partial[(b * slices + s) * hidden + c];
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
  for (int w = 0; w < warps; ++w) total += sums[w][lane];
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
  // About 4 slices a warp: one warp where the slices are few (b128 s128: 8), 8 at b4 s32768 (132).
  const int warps = static_cast<int>(std::clamp<std::int64_t>((slices + 3) / 4, 1, kCombineWarps));
  cuda_check(launch_dependent(combine_slices<T>, dim3(static_cast<unsigned>((p.hidden + 31) / 32), static_cast<unsigned>(p.batch)),
                              dim3(32 * warps), a.stream, static_cast<const float*>(partial), static_cast<const int*>(counts),
                              a.tensor<T>("y"), p.hidden, static_cast<int>(slices)),
             "launch mean_pooling_fwd's combine");
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
    .name = "fused_v2_counted_slices",
    .role = Role::fused,
    .description = "fused_v1 with the slices counting their kept rows and a combine that spreads the slices over "
                   "warps, launched programmatically dependent (resident before the slices end)",
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
    .tunables = {{"packs", {1, 2, 4}, "packs of a row a thread reads, 8 loads in flight in all",
                  [](const Shape& s, DType dtype) -> std::int64_t {
                    return pooling::pack_for(s.at("hidden"), dtype) == 1 ? 4 : 1;
                  },
                  "4 where the hidden size takes no 16-byte packs, else 1"},
                 {"blocks_per_sm",
                  {std::begin(pooling::kBlocksPerSmValues), std::end(pooling::kBlocksPerSmValues)},
                  "blocks of 128 threads a multiprocessor the token slices aim at"}},
});

}  // namespace
}  // namespace kwb
