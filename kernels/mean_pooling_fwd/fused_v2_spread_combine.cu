// mean_pooling_fwd fused_v2_spread_combine: fused_v1's slices (kept tokens only, 16-byte packs,
// fp32 partials a slice: pooling::pool_slices) and a combine made cheap, from fused_v1's profile
// (2026-11-27 notebook): its combine took 6-19 us of 159-302 at the large shapes (19 us at b4
// s32768 d4096) because each of its blocks counted the whole sequence's mask a byte a thread, and
// each thread added up to 132 slices one after the other, plus 2 us of gap before it.
//   - The combine counts the mask 16 bytes a load, and spreads a column's slices over up to 8
//     warps, added in warp order (the same order every launch: deterministic, no atomics).
//   - It is a programmatic dependent launch (dependent_launch.cuh), allowed by each slice block as
//     it ends: its launch overlaps the slices' last blocks, and it counts the mask (an input) before
//     it waits for their partials. The 2 us gap between the kernels closes.
//   - `packs`: 16-byte packs of a row a thread reads, and `rows_in_flight` rows' loads a thread has
//     in flight. One pack wins where the hidden size takes 16-byte packs; where it takes single
//     elements (d 4099), 4 a thread (2 rows in flight) read 1.5x faster than fused_v1's one.
//     In bf16, 4 rows in flight beat fused_v1's 8 at both sizes swept, at 16 blocks a multiprocessor
//     (2026-11-27 notebook, "mean pooling's loads in flight", calls 2 and 3): 153.6 and 152.5
//     against 157.8 and 157.0 us at b16 s4096, 286.5 and 286.9 against 292.3 and 291.4 at b4 s32768;
//     in fp32, 8 beat 4 (543.1 against 551.5 us at b4 s32768). 16 a thread was 21-81% slower, and
//     2 blocks a multiprocessor slower at every setting: neither is offered.
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

// n_b, the sequence's kept tokens, by the block's threads: 16 mask bytes a load where every
// sequence's row of the mask is 16-byte aligned (`by16`: the host checks the pointer and seq), else
// one. s32768 is 8 loads a thread at 256 threads.
__device__ __forceinline__ int count_kept(const bool* m, std::int64_t seq, bool by16) {
  int n = 0;
  if (by16) {
    const uint4* v = reinterpret_cast<const uint4*>(m);
    for (std::int64_t i = threadIdx.x; i < seq / 16; i += blockDim.x) {
      const uint4 w = v[i];  // bools are 0 or 1 bytes: the byte sum of a word is its popcount
      n += __popc(w.x) + __popc(w.y) + __popc(w.z) + __popc(w.w);
    }
  } else {
    for (std::int64_t i = threadIdx.x; i < seq; i += blockDim.x) n += m[i] ? 1 : 0;
  }
  return n;
}

// y[b, c] = (sum of the slices' partials) / max(n_b, 1). Block (32 columns, sequence) of `warps`
// warps (at most kCombineWarps): warp w adds slices w, w + warps, ... of its lane's column, and warp
// 0 adds the warps' sums in warp order (the same order every launch: deterministic); all of them
// count the mask.
constexpr int kCombineWarps = 8;

template <class T>
__global__ void __launch_bounds__(kCombineWarps * 32)
    combine_slices(const float* __restrict__ partial, const bool* __restrict__ mask, T* __restrict__ y,
                   std::int64_t seq, std::int64_t hidden, int slices, bool by16) {
  __shared__ float sums[kCombineWarps][32];
  __shared__ int kept[kCombineWarps];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const std::int64_t b = blockIdx.y, c = blockIdx.x * std::int64_t{32} + lane;
  // The mask is an input the slices do not write: counted before the wait, under the slices' tail.
  int n = count_kept(mask + b * seq, seq, by16);
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) n += __shfl_xor_sync(0xffffffffu, n, offset);
  if (lane == 0) kept[warp] = n;
  wait_for_previous_grid();  // every slice's partials written
  float sum = 0;
  if (c < hidden) {
#pragma unroll 4
    for (int s = warp; s < slices; s += warps) sum += partial[(b * slices + s) * hidden + c];
  }
  sums[warp][lane] = sum;
  __syncthreads();
  if (warp != 0 || c >= hidden) return;
  float total = 0;
  int count = 0;
  for (int w = 0; w < warps; ++w) total += sums[w][lane], count += kept[w];
  y[b * hidden + c] = from_float<T>(total / static_cast<float>(std::max(count, 1)));
}

std::int64_t block_columns(int pack, int packs) { return std::int64_t{kThreads} * pack * packs; }

template <class T, int E, int Packs, int Rows>
void pool(const LaunchArgs& a, const PoolingAxes& p) {
  const std::int64_t slices =
      pooling::slices_for(p, block_columns(E, Packs), std::min(multiprocessor_count(), pooling::kMostMultiprocessors),
                          a.tunable("blocks_per_sm"));
  const std::int64_t rows_per_slice = (p.seq + slices - 1) / slices;
  float* partial = static_cast<float*>(a.workspace);
  const dim3 grid(static_cast<unsigned>((p.hidden + block_columns(E, Packs) - 1) / block_columns(E, Packs)),
                  static_cast<unsigned>(slices), static_cast<unsigned>(p.batch));
  pooling::pool_slices<T, E, Rows, Packs><<<grid, kThreads, 0, a.stream>>>(
      a.tensor<const T>("x"), a.tensor<const bool>("mask"), partial, p.seq, p.hidden, rows_per_slice);
  const bool* mask = a.tensor<const bool>("mask");
  const bool by16 = p.seq % 16 == 0 && reinterpret_cast<std::uintptr_t>(mask) % 16 == 0;
  // About 4 slices a warp: one warp where the slices are few (b128 s128: 8), 8 at b4 s32768 (132).
  const int warps = static_cast<int>(std::clamp<std::int64_t>((slices + 3) / 4, 1, kCombineWarps));
  cuda_check(launch_dependent(combine_slices<T>, dim3(static_cast<unsigned>((p.hidden + 31) / 32), static_cast<unsigned>(p.batch)),
                              dim3(32 * warps), a.stream, static_cast<const float*>(partial), mask, a.tensor<T>("y"), p.seq,
                              p.hidden, static_cast<int>(slices), by16),
             "launch mean_pooling_fwd's combine");
}

template <class T, int E, int Packs>
void with_rows(const LaunchArgs& a, const PoolingAxes& p) {
  switch (a.tunable("rows_in_flight")) {
    case 2: return pool<T, E, Packs, 2>(a, p);
    case 4: return pool<T, E, Packs, 4>(a, p);
    default: return pool<T, E, Packs, 8>(a, p);
  }
}

template <class T, int E>
void with_packs(const LaunchArgs& a, const PoolingAxes& p) {
  switch (a.tunable("packs")) {
    case 1: return with_rows<T, E, 1>(a, p);
    case 2: return with_rows<T, E, 2>(a, p);
    default: return with_rows<T, E, 4>(a, p);
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
    .name = "fused_v2_spread_combine",
    .role = Role::fused,
    .description = "fused_v1's slices with a combine that counts the mask 16 bytes a load and spreads the slices "
                   "over warps, launched programmatically dependent (resident as the slices end)",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = pooling::refuse_batch_beyond_grid,
    .workspace_bytes =
        [](const Shape& s, DType dtype) {
          const PoolingAxes p = PoolingAxes::of(s);
          return pooling::partial_bytes(p, block_columns(pooling::pack_for(p.hidden, dtype), 4));  // packs 4: widest
        },
    .tunables = {{"packs", {1, 2, 4}, "packs of a row a thread reads",
                  [](const Shape& s, DType dtype) -> std::int64_t {
                    return pooling::pack_for(s.at("hidden"), dtype) == 1 ? 4 : 1;
                  },
                  "4 where the hidden size takes no 16-byte packs, else 1"},
                 {"blocks_per_sm",
                  {std::begin(pooling::kBlocksPerSmValues), std::end(pooling::kBlocksPerSmValues)},
                  "blocks of 128 threads a multiprocessor the token slices aim at"},
                 {"rows_in_flight", {8, 4, 2}, "token rows whose loads a thread has in flight at once (packs each)",
                  [](const Shape& s, DType dtype) -> std::int64_t {
                    if (pooling::pack_for(s.at("hidden"), dtype) == 1) return 2;
                    return dtype_size(dtype) == 2 ? 4 : 8;
                  },
                  "2 where the hidden size takes no 16-byte packs (4 packs a row: 8 loads), else 4 for 2-byte "
                  "elements and 8 for fp32"}},
});

}  // namespace
}  // namespace kwb
