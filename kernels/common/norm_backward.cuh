// Backward of a row normalisation (RMSNorm or LayerNorm) with a cp.async pipeline per row group:
// the device kernel that rmsnorm_bwd fused_v2/v3 and layernorm_bwd fused_v4/v5 share (their host
// plan, tunables and launch are in norm_backward_launch.cuh). The norm is a template parameter: RmsNormGrad (one row statistic, dweight) or
// LayerNormGrad (mean and rstd, dweight and dbias).
//
// Design. A CTA holds `groups` row groups of `tpr` threads (tpr a multiple of 32, as few as one
// warp for short rows); each group is persistent over rows gid, gid + total_groups, ... A thread
// always owns the same vectors of a row (vector lane + i * tpr, i < VPT), so:
//  - its x and dy vectors are copied by its own cp.async into its own slots of a ring of
//    `stages` row buffers in shared memory, `stages - 1` rows ahead of the row it computes. Only
//    the thread that issued a copy ever reads its slot, so cp.async.wait_group orders the copy
//    before the read and no barrier guards the ring; a slot is refilled only after its previous
//    row was read back by the same thread (program order), so no write-after-read either;
//  - its dweight (and dbias) columns are summed in registers over every row the group sees;
//  - the row statistics are one reduction per row (LayerNorm too: sums shifted by the row's first
//    element, see the kernel): warp shuffles that split the values across lanes plus, for groups
//    of several warps, one named barrier (bar.sync 1 + group, tpr) on a per-group scratch double
//    buffered by parity (see group_sums): groups never wait for each other, there is no
//    block-wide barrier per row, and short rows run a warp per row with no barrier at all.
// At the end the groups add their column sums into the CTA's row of fp32 partials (in the
// threads' layout, so the stores coalesce) in group order (a __syncthreads between groups), and
// a second launch sums the partials per column in a fixed order (column_partials.cuh):
// deterministic, no atomics.
//
// Why it should be fast: v1 kernels hold a row in registers, so the bytes a CTA has in flight are
// bounded by registers and drop to zero while the row is reduced. Here copies to shared memory
// need no registers while in flight: with 3 stages each group keeps 2 more rows loading while it
// reduces one, e.g. 16384 x 4096 bf16, VPT 2: tpr 256, 16 KB per row (x and dy), 2 groups per
// CTA = 96 KB of ring, 2 CTAs per SM: 8 rows = 128 KB in flight per SM, ~5x the ~20 KB that
// Little's law asks of an SM at 3 TB/s and ~1 us of latency. At 16384 columns one group of 1024
// threads, 64 KB per row, 3 stages = 192 KB: 2 rows in flight per SM.
// Napkin math (bf16 16384 x 4096): x, dy read + dx written = 403 MB, 133 us at 3031 GB/s; the
// partials add 2 x parts x cols x 4 B (RMS 264 x 16 KB x 2 = 8.6 MB, LayerNorm twice that, mostly
// L2 hits) and a ~3 us second launch: expected ~85-90% of copy at 4096-16384 columns, ~75-80% at
// 768-2048 (each 1.5-3 KB row costs a reduction round trip; more rows in flight hide it).
//
// Why the code looks as it does (H100, bf16; measured: docs/results.md): the kernel is bound by
// issue and latency, not DRAM (Nsight Compute: most issue slots busy at 16-32 warps per SM), so
// instructions were cut where LayerNorm spent them: group sums of ~30 instructions per row
// instead of ~110, one reduction instead of two, bf16 unpacked by one shift or mask per element
// (pack_floats.cuh). At 16384 columns the epilogue's scattered stores of the partials cost a
// large share of the kernel; the threads' layout (partial_layout.hpp) removed it. The spread
// between the fastest and slowest CTA's last row that remained there (one 512-thread group per
// SM) went with rows handed out by demand (Schedule::kDynamic).
//
// Sizes: vectors of 16 bytes, else 8, else 4 (the widest dividing a row's bytes, so every row
// starts on a vector boundary): bf16/fp16 rows of odd length cannot use cp.async and are
// refused (v1 kernels run them). Up to 4 vectors per thread and 1024 or 512 threads per group
// (max_threads_for: registers): cols <= 16384 in 16-byte vectors (LayerNorm fp32: 8192).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "harness/catalogue/device_types.cuh"
#include "harness/catalogue/registry.hpp"
#include "kernels/common/block_reduce.cuh"
#include "kernels/common/column_partials.cuh"
#include "kernels/common/pack_floats.cuh"
#include "kernels/common/partial_layout.hpp"
#include "kernels/common/vector_pack.cuh"

namespace kwb::norm_backward {

struct RmsNormGrad {
  static constexpr int kAccumulators = 1;  // dweight
};
struct LayerNormGrad {
  static constexpr int kAccumulators = 2;  // dweight, dbias
};

// The `stages` default. Static schedule, per row size: 2 while a row's x and dy take at most
// 32 KB (8192 bf16 columns), else 3: the best of 2 / 3 / 4 at each width on an H100 (bf16,
// layernorm_bwd fused_v4 and rmsnorm_bwd fused_v2; measured: docs/results.md). A static group must
// keep two 64 KB rows loading at 16384 columns to ride out its SM's slow rows; one row ahead is
// enough below that, and a deeper ring only takes L1 from the weight row. Dynamic schedule: 2 at
// every size (layernorm_bwd fused_v5): a group that waits on a slow row simply takes fewer rows.
inline constexpr std::int64_t kTwoStageRowBytes = 32 * 1024;
inline int default_stages(std::int64_t cols, std::int64_t elem_bytes, bool dynamic_rows) {
  return dynamic_rows || 2 * cols * elem_bytes <= kTwoStageRowBytes ? 2 : 3;
}

inline constexpr int kMaxGroupsNamed = 15;  // named barriers 1..15 (0 is __syncthreads)
inline constexpr int kMaxParts = 1024;      // CTAs of launch 1: sizes the workspace
inline constexpr int kMaxStages = 4;
// The ring's share of the 227 KB a CTA may opt into on H100/H200 (1 KB left for the scratch).
inline constexpr std::size_t kSmemLimit = 226 * 1024;

// Threads per CTA the registers allow (ptxas -v, sm_90): at 1024 threads (64 registers) RMS
// holds 16 elements per thread without spilling, LayerNorm (two column sums) fewer than 8; past
// that 512 threads (128 registers: LayerNorm at 32 elements uses 128, no spills). Capping
// LayerNorm at 16 elements to 64 registers (two 512-thread CTAs per SM at 8192 columns) spilled
// and ran slower than 32 elements per thread at 128 registers (H100).
__host__ __device__ constexpr int max_threads_for(int elems_per_thread, int accumulators) {
  return elems_per_thread * accumulators > 16 || (accumulators == 2 && elems_per_thread >= 8) ? 512 : 1024;
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int Bytes>
__device__ __forceinline__ void cp_async(void* smem_dst, const void* global_src) {
  const auto dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  if constexpr (Bytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(global_src) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst), "l"(global_src), "n"(Bytes) : "memory");
}

// Waits until at most `pending` (0..kMaxStages-1) of this thread's newest copy groups are in flight.
__device__ __forceinline__ void cp_async_wait(int pending) {
  switch (pending) {
    case 0: asm volatile("cp.async.wait_group 0;\n" ::: "memory"); break;
    case 1: asm volatile("cp.async.wait_group 1;\n" ::: "memory"); break;
    case 2: asm volatile("cp.async.wait_group 2;\n" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 3;\n" ::: "memory"); break;
  }
}

// Sums of N values (N = 1, 2 or 4) over a warp, split across the lanes: each butterfly step of
// the first log2(N) halves the values a lane carries (it keeps one half, sends its partner the
// other), the remaining steps add the one value left. Lane l ends with the warp's total of value
// l / (32 / N). 6 shuffles for 4 values instead of 20 (N butterflies of 5 steps).
template <int N>
__device__ __forceinline__ float warp_sums_split(const float (&v)[N]) {
  static_assert(N == 1 || N == 2 || N == 4, "N must be 1, 2 or 4");
  const int lane = threadIdx.x & 31;
  float b[N];
#pragma unroll
  for (int n = 0; n < N; ++n) b[n] = v[n];
#pragma unroll
  for (int width = N; width > 1; width /= 2) {  // offsets 16, then 8: keep the half of bit `offset`
    const int offset = 32 * width / (2 * N);
    const bool upper = lane & offset;
#pragma unroll
    for (int n = 0; n < width / 2; ++n) {
      const float keep = upper ? b[n + width / 2] : b[n], send = upper ? b[n] : b[n + width / 2];
      b[n] = keep + __shfl_xor_sync(0xffffffffu, send, offset);
    }
  }
#pragma unroll
  for (int offset = 16 / N; offset > 0; offset >>= 1) b[0] += __shfl_xor_sync(0xffffffffu, b[0], offset);
  return b[0];
}

// Sums N (1, 2 or 4) floats over a row group of `tpr` threads; every thread of the group gets the
// same bits. Within each warp, warp_sums_split; a group of several warps then writes one float
// per value and warp to scratch (parity, warp, value), meets at its named barrier, and in every
// warp the 32 / N lanes of value n add the group's warps (in a fixed order) and butterfly the
// result; the totals are broadcast from one lane per value. Every warp does the same arithmetic on
// the same numbers, and both partners of a butterfly step compute a + b and b + a (commutative),
// so every lane of every warp holds identical totals. Cost per row and thread: ~30 instructions
// for 4 values, against ~110 when each thread summed every warp's partials (2 x warps per value)
// and ~80 for N separate butterflies: at 16 elements per thread that is a fifth of the row's work.
// One barrier per call suffices because the buffer alternates: a warp that writes scratch[p]
// again (two calls later) has passed the barrier of the call in between, which every warp of the
// group reaches only after reading scratch[p].
template <int N>
__device__ __forceinline__ void group_sums(float (&v)[N], int tpr, int group, float4 (*scratch)[32], int& parity) {
  constexpr int kLanesPerValue = 32 / N;
  const int lane = threadIdx.x & 31;
  float total = warp_sums_split(v);  // lane l: value l / kLanesPerValue
  if (tpr > 32) {  // several warps: through scratch
    const int warp = threadIdx.x >> 5, warps = tpr >> 5, first = group * warps;
    if (lane % kLanesPerValue == 0) reinterpret_cast<float*>(&scratch[parity][warp])[lane / kLanesPerValue] = total;
    asm volatile("bar.sync %0, %1;\n" ::"r"(1 + group), "r"(tpr) : "memory");
    const int value = lane / kLanesPerValue;
    total = 0.f;
    for (int w = lane % kLanesPerValue; w < warps; w += kLanesPerValue)
      total += reinterpret_cast<const float*>(&scratch[parity][first + w])[value];
#pragma unroll
    for (int offset = kLanesPerValue / 2; offset > 0; offset >>= 1)
      total += __shfl_xor_sync(0xffffffffu, total, offset);
    parity ^= 1;
  }
#pragma unroll
  for (int n = 0; n < N; ++n) v[n] = __shfl_sync(0xffffffffu, total, n * kLanesPerValue);
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

template <class P>
__device__ __forceinline__ void store_pack(P* dst, const P& v) {
  if constexpr (sizeof(P) == 16) *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(&v);
  else if constexpr (sizeof(P) == 8) *reinterpret_cast<uint2*>(dst) = *reinterpret_cast<const uint2*>(&v);
  else *reinterpret_cast<unsigned*>(dst) = *reinterpret_cast<const unsigned*>(&v);
}

struct Args {
  const void* x;
  const void* w;
  const void* dy;
  void* dx;
  float* partials;  // (gridDim.x, PartialLayout::width()): the threads' layout
  int* row_counter;  // dynamic schedule only: rows handed out so far past the first wave (0 at launch)
  std::int64_t rows;
  int cols;
  int tpr;     // threads per row group (a multiple of 32)
  int stages;  // row buffers per group, 1..kMaxStages
  float eps;
};

// Bytes of a group's ring per stage: VPT vectors of x and VPT of dy per thread and, for
// LayerNorm, one 4-byte word per warp holding the row's first element (the shift of its
// one-pass statistics). The ring must leave the L1 room for the weight row, which both passes
// read every row: at 16384 bf16 columns a 16-byte shift slot per thread left 30 KB of L1 for a
// 32 KB row of w and ran 15% slower; a word per thread (2 KB a stage) put 3 stages at 198 KB
// with 11% L1 hits (Nsight Compute). A word per warp keeps them at 192 KB: Nsight Compute then
// shows a 200.7 KB shared-memory configuration and 31% L1 hits (4096 x 16384, with the coalesced
// partials of partial_layout.hpp).
__host__ __device__ constexpr int ring_stage_bytes(int vpt, int tpr, int vector_bytes, int accumulators) {
  return 2 * vpt * vector_bytes * tpr + (accumulators == 2 ? 4 * (tpr / 32) : 0);
}


// Element 0 of a row from the 4-byte word that starts it (little-endian: the low half for 16-bit types).
template <class T>
__device__ __forceinline__ float first_element(unsigned word) {
  if constexpr (std::is_same_v<T, float>) return __uint_as_float(word);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __uint_as_float(word << 16);
  else return __half2float(__ushort_as_half(static_cast<unsigned short>(word & 0xffffu)));
}

// Which rows a group takes. kStatic: rows gid, gid + total_groups, ... (a CTA's rows, hence its
// partials and dweight's bits, are the same in every run). kDynamic: the first wave as kStatic,
// then each next row from an atomic counter (Args::row_counter), fetched one row ahead by the
// group's first thread: a group that runs faster takes more rows, so the CTAs end together, but
// which rows a CTA sums into its partials varies from run to run and so do dweight's (and
// dbias') last bits; dx is unchanged (a row's arithmetic does not depend on its group).
enum class Schedule { kStatic, kDynamic };

// The dynamic schedule's row ring: the row index of position p (the group's p-th row) in slot
// p % kRowRing, written by the group's first thread `stages` positions ahead and read by the
// group one (issue) and `stages` (compute) iterations later: kMaxStages + 1 slots keep a slot
// from being rewritten before every thread of the group has passed the barrier after its read.
inline constexpr int kRowRing = kMaxStages + 1;
inline constexpr int kMaxGroups = 32;  // 1024 threads in groups of one warp

// V: elements per vector (16, 8 or 4 bytes); VPT: vectors per thread.
template <class Norm, class T, int V, int VPT, Schedule S = Schedule::kStatic>
__global__ void __launch_bounds__(max_threads_for(V* VPT, Norm::kAccumulators)) norm_backward_kernel(Args a) {
  constexpr bool kDynamic = S == Schedule::kDynamic;
  using P = Pack<T, V>;
  constexpr int A = Norm::kAccumulators;
  // The column sums (launch 2) may take SMs as this grid's CTAs leave them: they wait for its end.
  allow_dependent_launch();
  extern __shared__ __align__(16) unsigned char ring_bytes[];
  __shared__ float4 scratch[2][32];  // group_sums: (parity, warp) x 4 values
  const int tpr = a.tpr, groups = blockDim.x / tpr, stages = a.stages;
  const int group = threadIdx.x / tpr, lane = threadIdx.x % tpr;
  const int nvec = a.cols / V;
  // Ring of this group: (stage, slot, lane) vectors, lane fastest (conflict-free), slots x[i] then
  // dy[i]; after every group's vectors, LayerNorm's shift words (group, stage, warp). A thread
  // only ever touches its own vector slots; a shift word is copied by lane 0 of its warp and read
  // by the whole warp after a __syncwarp.
  const int stage_stride = 2 * VPT * tpr;
  const int warps = tpr / 32, warp_in_group = lane / 32;
  const bool shift_copier = (threadIdx.x & 31) == 0;
  P* ring = reinterpret_cast<P*>(ring_bytes) + static_cast<std::int64_t>(group) * stages * stage_stride + lane;
  unsigned* shifts = reinterpret_cast<unsigned*>(reinterpret_cast<P*>(ring_bytes) + blockDim.x * stages * 2 * VPT) +
                     group * stages * warps + warp_in_group;
  const P* xv = static_cast<const P*>(a.x) + lane;  // rows start on vector boundaries (plan_for)
  const P* dyv = static_cast<const P*>(a.dy) + lane;
  const P* wv = static_cast<const P*>(a.w) + lane;
  const std::int64_t total_groups = std::int64_t{gridDim.x} * groups;
  const std::int64_t first_row = std::int64_t{blockIdx.x} * groups + group;
  const float inv_cols = 1.0f / static_cast<float>(a.cols);

  // Copies `row` (if it exists) into ring stage `stage`, as one commit group.
  auto issue = [&](std::int64_t row, int stage) {
    if (row < a.rows) {
      P* st = ring + stage * stage_stride;
      const P* xr = xv + row * nvec;
      const P* dyr = dyv + row * nvec;
#pragma unroll
      for (int i = 0; i < VPT; ++i) {
        if (lane + i * tpr < nvec) {
          cp_async<sizeof(P)>(st + i * tpr, xr + i * tpr);
          cp_async<sizeof(P)>(st + (VPT + i) * tpr, dyr + i * tpr);
        }
      }
      if constexpr (A == 2)
        if (shift_copier) cp_async<4>(shifts + stage * warps, xr - lane);  // the word holding x[row][0]
    }
    cp_async_commit();  // an empty group past the last row keeps the wait count uniform
  };

  float acc[A][VPT][V];  // this thread's dweight (and dbias) columns over the group's rows
#pragma unroll
  for (int n = 0; n < A; ++n)
#pragma unroll
    for (int i = 0; i < VPT; ++i)
#pragma unroll
      for (int e = 0; e < V; ++e) acc[n][i][e] = 0.f;

  int parity = 0;
  const std::int64_t my_rows = first_row < a.rows ? (a.rows - first_row + total_groups - 1) / total_groups : 0;
  std::int64_t ahead_row = first_row;  // the next row to copy, and its stage
  int ahead_stage = 0;

  // Dynamic schedule: the group's row ring and its three cursors (slots of the row computed, the
  // row copied next and the row fetched next); the first thread of the group fetches.
  [[maybe_unused]] int* row_ring = nullptr;
  [[maybe_unused]] int compute_slot = 0, ahead_slot = 0, fetch_slot = 0;
  [[maybe_unused]] const bool fetcher = lane == 0;
  [[maybe_unused]] bool exhausted = false;
  auto group_barrier = [&] {
    if (tpr > 32) asm volatile("bar.sync %0, %1;\n" ::"r"(1 + group), "r"(tpr) : "memory");
    else __syncwarp();
  };
  // The next row from the counter (rows past the first wave), or a.rows once they are all taken.
  auto fetch_row = [&]() -> int {
    if (exhausted) return static_cast<int>(a.rows);
    const std::int64_t r = total_groups + atomicAdd(a.row_counter, 1);
    exhausted = r >= a.rows;
    return static_cast<int>(std::min<std::int64_t>(r, a.rows));
  };
  if constexpr (kDynamic) {
    __shared__ int ring_rows[kMaxGroups][kRowRing];
    row_ring = ring_rows[group];
    if (fetcher) {  // positions 0 .. stages - 1: the first wave's row, then the counter's
      row_ring[0] = static_cast<int>(std::min<std::int64_t>(first_row, a.rows));
      exhausted = first_row >= a.rows;
      for (int k = 1; k < stages; ++k) row_ring[k] = fetch_row();
    }
    fetch_slot = stages;
    group_barrier();
  }
  auto issue_next = [&] {
    if constexpr (kDynamic) {
      issue(row_ring[ahead_slot], ahead_stage);
      ahead_slot = ahead_slot + 1 == kRowRing ? 0 : ahead_slot + 1;
    } else {
      issue(ahead_row, ahead_stage);
      ahead_row += total_groups;
    }
    ahead_stage = ahead_stage + 1 == stages ? 0 : ahead_stage + 1;
  };
  for (int k = 0; k < stages - 1; ++k) issue_next();
  std::int64_t row = first_row;
  int stage = 0;
  // Static: the same count for every thread of the group. Dynamic: until the ring's row is past
  // the end (every thread of the group reads the same slot).
  for (std::int64_t k = 0; kDynamic || k < my_rows; ++k) {
    [[maybe_unused]] int fetched = 0;
    if constexpr (kDynamic) {
      row = row_ring[compute_slot];
      if (row >= a.rows) break;
      compute_slot = compute_slot + 1 == kRowRing ? 0 : compute_slot + 1;
      if (fetcher) fetched = fetch_row();  // the row `stages` positions ahead; used after this row
    }
    // LayerNorm: every lane has read the previous row's shift word before lane 0 refills its stage.
    if constexpr (A == 2) __syncwarp();
    issue_next();  // into the stage the previous row used: read back by this thread already
    cp_async_wait(stages - 1);  // this row's copies (this thread's) have landed
    if constexpr (A == 2) __syncwarp();  // and lane 0's shift word is visible to its warp
    const P* st = ring + stage * stage_stride;

    // One reduction per row. RMS: x^2 and g x (g = w dy). LayerNorm: shifted sums of d = x - x0,
    // d^2, g and g d, with x0 the row's first element: mean = x0 + mean(d), var = mean(d^2) -
    // mean(d)^2 and sum g (x - mean) = sum g d - mean(d) sum g. The shift keeps the subtraction
    // benign (x0 lies within the row's spread), and a second reduction for an exact two-pass mean
    // cost 15% of the kernel's instructions and a barrier per row.
    float shift = 0.f;
    if constexpr (A == 2) shift = first_element<T>(shifts[stage * warps]);
    constexpr int N = A == 2 ? 4 : 2;
    float s[N];
#pragma unroll
    for (int n = 0; n < N; ++n) s[n] = 0.f;
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      if (lane + i * tpr < nvec) {
        float xf[V], dyf[V], wf[V];
        unpack_floats(load_pack<P, false>(st + i * tpr), xf);
        unpack_floats(load_pack<P, false>(st + (VPT + i) * tpr), dyf);
        unpack_floats(load_pack<P, true>(wv + i * tpr), wf);
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const float d = xf[e] - shift, g = wf[e] * dyf[e];
          if constexpr (A == 2) {
            s[0] += d;
            s[1] += d * d;
            s[2] += g;
            s[3] += g * d;
          } else {
            s[0] += d * d;
            s[1] += g * d;
          }
        }
      }
    }
    if constexpr (kDynamic) {  // published by the barrier below (group_sums' own, or a warp's)
      if (fetcher) row_ring[fetch_slot] = fetched;
      fetch_slot = fetch_slot + 1 == kRowRing ? 0 : fetch_slot + 1;
      if (tpr == 32) __syncwarp();
    }
    group_sums(s, tpr, group, scratch, parity);
    float mean = 0.f, rstd, mean_g = 0.f, mean_g_xhat;
    if constexpr (A == 2) {
      const float mean_d = s[0] * inv_cols;
      mean = shift + mean_d;
      rstd = rsqrtf(fmaxf(s[1] * inv_cols - mean_d * mean_d, 0.f) + a.eps);
      mean_g = s[2] * inv_cols;
      mean_g_xhat = (s[3] * inv_cols - mean_d * mean_g) * rstd;
    } else {
      rstd = rsqrtf(s[0] * inv_cols + a.eps);
      mean_g_xhat = s[1] * inv_cols * rstd;
    }
    // dx = rstd (g - mean(g) - xhat mean(g xhat)), xhat = (x - mean) rstd, g = w dy, as
    // dx = w u + c1 (x - mean) + c0 with u = rstd dy, c1 = -rstd^2 mean(g xhat), c0 = -rstd mean(g);
    // u also gives dweight's term dy xhat = u (x - mean).
    const float c1 = -rstd * rstd * mean_g_xhat, c0 = -rstd * mean_g;

    P* dxr = static_cast<P*>(a.dx) + row * nvec + lane;
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      if (lane + i * tpr < nvec) {
        float xf[V], dyf[V], wf[V], out[V];
        unpack_floats(load_pack<P, false>(st + i * tpr), xf);
        unpack_floats(load_pack<P, false>(st + (VPT + i) * tpr), dyf);
        unpack_floats(load_pack<P, true>(wv + i * tpr), wf);
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const float d = xf[e] - mean, u = rstd * dyf[e];
          out[e] = fmaf(wf[e], u, fmaf(c1, d, c0));
          acc[0][i][e] = fmaf(u, d, acc[0][i][e]);  // dy xhat
          if constexpr (A == 2) acc[A - 1][i][e] += dyf[e];
        }
        store_pack(dxr + i * tpr, pack_floats<T, V>(out));
      }
    }
    if constexpr (!kDynamic) row += total_groups;
    stage = stage + 1 == stages ? 0 : stage + 1;
  }
  cp_async_wait(0);  // nothing of this thread's in flight at exit (the trailing groups are empty)

  // The CTA's partials in the threads' layout (PartialLayout): group 0 writes, the others add in
  // group order, a __syncthreads between groups making each group's global writes visible to the
  // next.
  const PartialLayout layout{tpr, VPT, V, a.cols, A};
  float* part = a.partials + std::int64_t{blockIdx.x} * layout.width() + (lane / 32) * (A * VPT * V * 32) + (lane % 32);
  auto store_partials = [&](bool add) {
#pragma unroll
    for (int n = 0; n < A; ++n)
#pragma unroll
      for (int i = 0; i < VPT; ++i) {
        const bool in_row = lane + i * tpr < nvec;
#pragma unroll
        for (int e = 0; e < V; ++e) {
          float* p = part + ((n * VPT + i) * V + e) * 32;
          const float mine = in_row ? acc[n][i][e] : 0.f;
          *p = add ? *p + mine : mine;
        }
      }
  };
  if (group == 0) store_partials(false);
  for (int g = 1; g < groups; ++g) {
    __syncthreads();
    if (group == g) store_partials(true);
  }
}

}  // namespace kwb::norm_backward
