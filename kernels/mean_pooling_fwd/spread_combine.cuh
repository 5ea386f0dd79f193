// What mean_pooling_fwd's fused_v2 and fused_v3 share after their slices: the combine kernel that
// adds a sequence's fp32 partials and divides by its kept tokens (counting the mask 16 bytes a
// load, spreading the slices over warps, launched programmatically dependent; fused_v3 with
// combine=1), the mask count it uses, and the dispatch of the `packs`, `rows_in_flight` and
// `l2_hint` tunables to the slices' kernel.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/registry.hpp"
#include "kernels/common/dependent_launch.cuh"
#include "kernels/common/multiprocessors.hpp"
#include "kernels/common/vector_pack.cuh"
#include "kernels/mean_pooling_fwd/token_slices.cuh"
#include "reference/mean_pooling.hpp"

namespace kwb {
namespace pooling {

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
// warps (at most kCombineWarps): warp w adds slices w, w + warps, ... of its lane's column, and
// warp 0 adds the warps' sums in warp order (the same order every launch: deterministic); all of
// them count the mask. `counters` (fused_v3's row counters, counters_per_seq a sequence; null for
// fused_v2): the first block of each sequence sets them back to zero for the next launch, after
// the wait, when no slice block takes rows any more.
constexpr int kCombineWarps = 8;

template <class T>
__global__ void __launch_bounds__(kCombineWarps * 32)
    combine_slices(const float* __restrict__ partial, const bool* __restrict__ mask,
                   T* __restrict__ y, std::int64_t seq, std::int64_t hidden, int slices, bool by16,
                   int* __restrict__ counters, int counters_per_seq) {
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
  if (counters != nullptr && blockIdx.x == 0)
    for (int i = threadIdx.x; i < counters_per_seq; i += blockDim.x)
      counters[b * counters_per_seq + i] = 0;
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

// The combine over `slices` partials a sequence, launched dependent on the slices' kernel.
template <class T>
void launch_combine(const LaunchArgs& a, const PoolingAxes& p, const float* partial,
                    std::int64_t slices, int* counters = nullptr, int counters_per_seq = 0) {
  const bool* mask = a.tensor<const bool>("mask");
  const bool by16 = p.seq % 16 == 0 && reinterpret_cast<std::uintptr_t>(mask) % 16 == 0;
  // About 4 slices a warp: one warp where the slices are few (b128 s128: 8), 8 at b4 s32768 (132).
  const int warps = static_cast<int>(std::clamp<std::int64_t>((slices + 3) / 4, 1, kCombineWarps));
  cuda_check(launch_dependent(
                 combine_slices<T>,
                 dim3(static_cast<unsigned>((p.hidden + 31) / 32), static_cast<unsigned>(p.batch)),
                 dim3(32 * warps), a.stream, partial, mask, a.tensor<T>("y"), p.seq, p.hidden,
                 static_cast<int>(slices), by16, counters, counters_per_seq),
             "launch mean_pooling_fwd's combine");
}

// Columns a block of the slices' kernel covers: 128 threads, `packs` packs of `pack` elements each.
inline std::int64_t block_columns(int pack, int packs) {
  return std::int64_t{kThreads} * pack * packs;
}

// Calls pool.template operator()<T, E, Packs, Rows, H>() with E the 16-byte pack where the hidden
// size takes it (else 1), and Packs, Rows and H the `packs`, `rows_in_flight` and `l2_hint`
// tunables (H is kNormal for packs of one element: the hints are 16-byte loads).
template <class T, class Pool>
void with_pack_and_rows(const LaunchArgs& a, const PoolingAxes& p, Pool&& pool) {
  constexpr int kPack = 16 / sizeof(T);
  // The rows a launch reads: the kept fraction of x (the work model's count).
  const double bytes_read =
      kPoolingKeptFraction * static_cast<double>(p.batch * p.seq * p.hidden) * sizeof(T);
  const l2::Hint asked = static_cast<l2::Hint>(a.tunable("l2_hint"));
  const l2::Hint hint_used = l2::resolve(asked, l2::Hint::kStreaming, bytes_read, l2_cache_bytes());
  auto hint = [&]<int E, int Packs, int Rows>() {
    if constexpr (E == kPack) {
      if (hint_used == l2::Hint::kStreaming)
        return pool.template operator()<T, E, Packs, Rows, l2::Hint::kStreaming>();
    }
    return pool.template operator()<T, E, Packs, Rows, l2::Hint::kNormal>();
  };
  auto rows = [&]<int E, int Packs>() {
    switch (a.tunable("rows_in_flight")) {
      case 2: return hint.template operator()<E, Packs, 2>();
      case 4: return hint.template operator()<E, Packs, 4>();
      default: return hint.template operator()<E, Packs, 8>();
    }
  };
  auto packs = [&]<int E>() {
    switch (a.tunable("packs")) {
      case 1: return rows.template operator()<E, 1>();
      case 2: return rows.template operator()<E, 2>();
      default: return rows.template operator()<E, 4>();
    }
  };
  if (pack_for(p.hidden, a.dtype) == kPack)
    packs.template operator()<kPack>();
  else
    packs.template operator()<1>();
}

// The slices' tunables, fused_v2's and fused_v3's: packs a thread reads, blocks a multiprocessor,
// rows in flight (fused_v2's header says how each default was measured).
inline std::vector<Tunable> slice_tunables() {
  return {
      {"packs",
       {1, 2, 4},
       "packs of a row a thread reads",
       [](const Shape& s, DType dtype) -> std::int64_t {
         return pooling::pack_for(s.at("hidden"), dtype) == 1 ? 4 : 1;
       },
       "4 where the hidden size takes no 16-byte packs, else 1"},
      {"blocks_per_sm",
       {std::begin(pooling::kBlocksPerSmValues), std::end(pooling::kBlocksPerSmValues)},
       "blocks of 128 threads a multiprocessor the token slices aim at"},
      {"rows_in_flight",
       {8, 4, 2},
       "token rows whose loads a thread has in flight at once (packs each)",
       [](const Shape& s, DType dtype) -> std::int64_t {
         if (pooling::pack_for(s.at("hidden"), dtype) == 1) return 2;
         return dtype_size(dtype) == 2 ? 4 : 8;
       },
       "2 where the hidden size takes no 16-byte packs (4 packs a row: 8 loads), else 4 for 2-byte "
       "elements and 8 for fp32"},
      {"l2_hint",
       {static_cast<std::int64_t>(l2::Hint::kAuto), static_cast<std::int64_t>(l2::Hint::kNormal),
        static_cast<std::int64_t>(l2::Hint::kStreaming)},
       "L2 hint on the row loads (16-byte packs; others load plainly): 1 none, 2 ld.global.cs, 4 auto: "
       "ld.global.cs where the kept rows are at most 6x the L2 (kernels/common/l2_hint.hpp says why; 3, "
       "an L2 evict_first policy, measured the same as 2 at every default shape and is not built)"}};
}

}  // namespace pooling
}  // namespace kwb
