// mean_pooling_fwd fused_v3_dynamic_tail_rows: fused_v2 (the same slices, 16-byte packs and fp32
// sums) with the last rows of each sequence handed out by demand, and its combine in the last block.
// Why: fused_v2's slices are equal static shares (2112 blocks at b4 s32768 in bf16, aimed at 16
// a multiprocessor, of which 8 fit at its 60 registers: two waves), and its bf16 cases reach
// 82-87.5% of the read roof where a bare read of the same bytes reaches 93-96.3% (2026-11-27
// stream-K notebook). A static share ends when its block does; blocks that get less of the memory
// system's bandwidth finish late while the rest idle.
// Here each slice sums the first (100 - dynamic_percent)% of its sequence in contiguous shares as
// fused_v2 does (the access pattern that measured fastest), and then claims groups of
// 2 x rows_in_flight rows of the rest from a counter per (sequence, column block). Each block
// holds one claim ahead (its first taken at the start), so where the claims are many (the large
// shapes: tens a block) the blocks that run fast take more of the tail, and the last ends within
// about two claims' time of the counter running out; where they are fewer than the blocks, they
// go by start order. The grid is at most one wave (the kernel's residency from the occupancy
// query, at most blocks_per_sm, rounded down): claims can only even out blocks that are all
// resident.
// Price: which rows a partial holds depends on timing, so y's last bits may vary from run to run
// (varies_run_to_run); fused_v2 stays the deterministic choice.
// Where the slices' sums meet (the `combine` tunable): a second kernel adds the fp32 partials slice
// by slice (fused_v2's, launched dependent; which rows a partial holds still depends on the
// claims), or each block adds its sums into an fp32 row of the sequence with vector atomics and
// the last block of each (sequence, column block) to arrive divides and writes y, so that no
// second kernel runs after the slices' tail (6.9 us of the 281.9 us at bf16 b4 s32768, 2026-11-28
// notebook). The kept-token count it divides by is counted
// by the slice-0 block of each (sequence, column block) before its rows, off the tail.
// State (claim counters, arrivals, counts, sums): zeroed once in prepare(); each launch leaves it
// zero again (the combine kernel, or the last block, after every block of its group is done).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/align_up.hpp"
#include "kernels/common/multiprocessors.hpp"
#include "kernels/mean_pooling_fwd/spread_combine.cuh"
#include "kernels/mean_pooling_fwd/token_slices.cuh"
#include "reference/mean_pooling.hpp"

namespace kwb {
namespace {

using pooling::block_columns;
using pooling::kThreads;

// Rows a claim hands out: two groups of Rows, so that the second group's mask bits are read under
// the first's loads, as in a static share.
template <int Rows>
constexpr int kClaimRows = 2 * Rows;

// What the blocks of a (sequence, column block) share in the workspace, one entry a group
// (b x column blocks + column block); sums: an fp32 row of the hidden size a sequence.
struct TailState {
  int* claims = nullptr;    // the next claim's number
  int* arrivals = nullptr;  // blocks done (kLastBlockCombines)
  int* kept = nullptr;      // the sequence's kept tokens (kLastBlockCombines)
  float* sums = nullptr;    // [batch, hidden] (kLastBlockCombines)
};

// The slice-0 block of a group counts its sequence's kept tokens (16 mask bytes a load where
// `by16`) into *out.
__device__ __forceinline__ void store_kept_count(int* out, const bool* m, std::int64_t seq, bool by16) {
  __shared__ int total;
  if (threadIdx.x == 0) total = 0;
  __syncthreads();
  int n = pooling::count_kept(m, seq, by16);
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) n += __shfl_xor_sync(0xffffffffu, n, offset);
  if (threadIdx.x % 32 == 0) atomicAdd(&total, n);
  __syncthreads();
  if (threadIdx.x == 0) atomicExch(out, total);
}

// 16-byte atomicAdd on float4 is sm_90's; other targets add one float at a time.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
constexpr bool kVectorAtomics = true;
#else
constexpr bool kVectorAtomics = false;
#endif

// Adds this block's sums into its sequence's row (`sums_b`); the last block of the group to
// arrive then writes y's columns (sum / kept tokens) and leaves the group's state zero.
template <class T, int E, int Packs>
__device__ __forceinline__ void add_then_finish_in_last_block(const float (&acc)[Packs][E], const TailState& st,
                                                              std::int64_t group, int blocks_in_group, float* sums_b,
                                                              T* yb, std::int64_t col, std::int64_t hidden,
                                                              bool owns) {
  constexpr int kStride = kThreads * E;
  if (owns) {
#pragma unroll
    for (int k = 0; k < Packs; ++k) {
      if (col + k * kStride >= hidden) continue;
      float* s = sums_b + col + k * kStride;
      if constexpr (kVectorAtomics && E % 4 == 0) {  // the pack's columns are 16-byte aligned
#pragma unroll
        for (int e = 0; e < E; e += 4)
          atomicAdd(reinterpret_cast<float4*>(s + e), make_float4(acc[k][e], acc[k][e + 1], acc[k][e + 2], acc[k][e + 3]));
      } else {
#pragma unroll
        for (int e = 0; e < E; ++e) atomicAdd(s + e, acc[k][e]);
      }
    }
  }
  __threadfence();  // the sums before the arrival
  __shared__ int arrived, kept;
  __syncthreads();
  if (threadIdx.x == 0) arrived = atomicAdd(st.arrivals + group, 1);
  __syncthreads();
  if (arrived != blocks_in_group - 1) return;
  __threadfence();  // every block's sums and the count before the reads below
  // Thread 0 takes the count (and zeroes it) and shares it behind a barrier: zeroed after every
  // warp had read it for itself, a warp that ran ahead could zero it before the others read it,
  // and they divided by 1 (what a first version did under racecheck, whose scheduling runs warps
  // one after another; racecheck watches shared memory only, so it reported no hazard).
  if (threadIdx.x == 0) {
    kept = atomicExch(st.kept + group, 0);
    st.claims[group] = st.arrivals[group] = 0;  // no block of the group touches them again this launch
  }
  __syncthreads();
  const float count = static_cast<float>(max(kept, 1));
  // Each thread reads and zeroes only its own columns, which no other block writes any more:
  // from the L2 (__ldcg), where the other blocks' atomics were performed.
  if (owns) {
#pragma unroll
    for (int k = 0; k < Packs; ++k) {
      if (col + k * kStride >= hidden) continue;
      float* s = sums_b + col + k * kStride;
      Pack<T, E> out;
#pragma unroll
      for (int e = 0; e < E; ++e) {
        out.v[e] = from_float<T>(__ldcg(s + e) / count);
        s[e] = 0.0f;
      }
      *reinterpret_cast<Pack<T, E>*>(yb + col + k * kStride) = out;
    }
  }
}

// Block (column block, slice, sequence): the slice's static share [slice * rows_per_slice, ...)
// below static_rows, then kClaimRows rows at a time from static_rows on, as the counter of its
// (sequence, column block) hands them out. One sum_kept_rows for both, so the kernel holds as few
// registers as fused_v2's (its residency sets the wave). Every thread stays for the barriers
// (those past the hidden size read nothing). Then its sums go to a partial (a second kernel
// combines) or, kLastBlockCombines, into the sequence's row (the group's last block writes y).
template <class T, int E, int Rows, int Packs, l2::Hint H, bool kLastBlockCombines>
__global__ void __launch_bounds__(kThreads)
    pool_slices_then_claims(const T* __restrict__ x, const bool* __restrict__ mask,
                            float* __restrict__ partial, TailState st, T* __restrict__ y,
                            std::int64_t seq, std::int64_t hidden, std::int64_t rows_per_slice,
                            std::int64_t static_rows, bool mask_by16) {
  const std::int64_t col = blockIdx.x * std::int64_t{kThreads} * E * Packs + threadIdx.x * E;
  const std::int64_t b = blockIdx.z, slice = blockIdx.y, slices = gridDim.y;
  const bool owns = col < hidden;
  const std::int64_t group = b * gridDim.x + blockIdx.x;
  int* counter = st.claims + group;
  __shared__ int claimed[2];  // two, so that writing the next claim never races a read of this one
  // The first claim goes out now; its answer is first read after the static share.
  int ticket = threadIdx.x == 0 ? atomicAdd(counter, 1) : 0;
  const T* xb = x + b * seq * hidden + col;
  const bool* m = mask + b * seq;
  if constexpr (kLastBlockCombines) {
    if (slice == 0) store_kept_count(st.kept + group, m, seq, mask_by16);
  }
  float acc[Packs][E] = {};
  std::int64_t start = slice * rows_per_slice, end = std::min(static_rows, start + rows_per_slice);
  for (int k = 0;; k ^= 1) {
    if (owns) pooling::sum_kept_rows<T, E, Rows, Packs, H>(acc, xb, m, start, end, col, hidden);
    if (threadIdx.x == 0) claimed[k] = ticket;
    __syncthreads();
    start = static_rows + std::int64_t{claimed[k]} * kClaimRows<Rows>;
    if (start >= seq) break;  // the same claim for every thread: a uniform exit
    end = std::min(seq, start + kClaimRows<Rows>);
    if (threadIdx.x == 0)
      ticket = atomicAdd(counter, 1);  // the next claim, under these rows' loads
  }
  if constexpr (kLastBlockCombines) {
    add_then_finish_in_last_block<T, E, Packs>(acc, st, group, static_cast<int>(slices), st.sums + b * hidden,
                                               y + b * hidden, col, hidden, owns);
  } else {
    if (owns) pooling::store_partial<E, Packs>(partial, acc, b, slice, slices, col, hidden);
    allow_dependent_launch();
  }
}

// The `combine` tunable's values.
constexpr std::int64_t kSecondKernel = 1, kLastBlock = 2;

// The workspace: the state (TailState: three ints a group, a sequence's column blocks counted at
// one pack a thread, the most any `packs` gives; then the sums), then fused_v2's partials.
std::size_t group_ints_bytes(const PoolingAxes& p, int pack) {
  return align_up(
      static_cast<std::size_t>(p.batch * pooling::column_blocks(p.hidden, block_columns(pack, 1))) *
      sizeof(int));
}

std::size_t state_bytes(const PoolingAxes& p, int pack) {
  return 3 * group_ints_bytes(p, pack) + align_up(static_cast<std::size_t>(p.batch * p.hidden) * sizeof(float));
}

TailState state_in(void* workspace, const PoolingAxes& p, int pack) {
  auto* base = static_cast<unsigned char*>(workspace);
  const std::size_t ints = group_ints_bytes(p, pack);
  return {.claims = reinterpret_cast<int*>(base),
          .arrivals = reinterpret_cast<int*>(base + ints),
          .kept = reinterpret_cast<int*>(base + 2 * ints),
          .sums = reinterpret_cast<float*>(base + 3 * ints)};
}

std::size_t workspace_bytes(const Shape& s, DType dtype) {
  const PoolingAxes p = PoolingAxes::of(s);
  const int pack = pooling::pack_for(p.hidden, dtype);
  return state_bytes(p, pack) +
         pooling::partial_bytes(p, block_columns(pack, 4));  // packs 4: the most slices
}

// Found once in prepare(): blocks of the case's kernel a multiprocessor holds at once (its
// registers set it: 8 for bf16's default, 64 registers with either combine), and the
// multiprocessors.
struct Residency {
  int blocks_per_sm = 0;
  int multiprocessors = 0;
};

template <class T, int E, int Rows, int Packs, l2::Hint H, bool kLastBlockCombines>
int resident_blocks() {
  int blocks = 0;
  cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                 &blocks, pool_slices_then_claims<T, E, Rows, Packs, H, kLastBlockCombines>, kThreads, 0),
             "occupancy of mean_pooling_fwd's slices");
  return std::max(blocks, 1);
}

// Calls fn.template operator()<kLastBlockCombines>() as the `combine` tunable asks.
template <class Fn>
void with_combine(const LaunchArgs& a, Fn&& fn) {
  if (a.tunable("combine") == kLastBlock) fn.template operator()<true>();
  else fn.template operator()<false>();
}

template <class T>
int residency_of(const LaunchArgs& a, const PoolingAxes& p) {
  int blocks = 0;
  pooling::with_pack_and_rows<T>(a, p, [&]<class U, int E, int Packs, int Rows, l2::Hint H>() {
    with_combine(a, [&]<bool kHere>() { blocks = resident_blocks<U, E, Rows, Packs, H, kHere>(); });
  });
  return blocks;
}

// Zeroes the state (each launch leaves it zero again) and finds the residency.
std::shared_ptr<void> prepare(const LaunchArgs& a) {
  const PoolingAxes p = PoolingAxes::of(a.shape);
  cuda_check(cudaMemsetAsync(a.workspace, 0, state_bytes(p, pooling::pack_for(p.hidden, a.dtype)), a.stream),
             "zero mean_pooling_fwd's row counters and sums");
  auto state = std::make_shared<Residency>();
  state->multiprocessors = std::min(multiprocessor_count(), pooling::kMostMultiprocessors);
  dispatch_dtype(a.dtype,
                 [&](auto tag) { state->blocks_per_sm = residency_of<decltype(tag)>(a, p); });
  return state;
}

template <class T>
void launch_typed(const LaunchArgs& a) {
  std::shared_ptr<void> own;  // only if the harness did not call prepare()
  if (a.state == nullptr) own = prepare(a);
  const auto& residency = *static_cast<const Residency*>(a.state ? a.state : own.get());
  const PoolingAxes p = PoolingAxes::of(a.shape);
  pooling::with_pack_and_rows<T>(a, p, [&]<class U, int E, int Packs, int Rows, l2::Hint H>() {
    // At most one wave (1024 of 1056 slots at bf16 b16 s4096): the claims can only even out
    // blocks that are all resident; a second wave's blocks start late and end late.
    const std::int64_t slices = pooling::slices_for(
        p, block_columns(E, Packs), residency.multiprocessors,
        std::min<std::int64_t>(a.tunable("blocks_per_sm"), residency.blocks_per_sm),
        /*at_most_one_wave=*/true);
    const std::int64_t rows_per_slice = p.seq * (100 - a.tunable("dynamic_percent")) / 100 / slices;
    const std::int64_t column_blocks = pooling::column_blocks(p.hidden, block_columns(E, Packs));
    const int pack = pooling::pack_for(p.hidden, a.dtype);
    const TailState st = state_in(a.workspace, p, pack);
    float* partial = reinterpret_cast<float*>(static_cast<unsigned char*>(a.workspace) + state_bytes(p, pack));
    const bool* mask = a.tensor<const bool>("mask");
    const bool by16 = p.seq % 16 == 0 && reinterpret_cast<std::uintptr_t>(mask) % 16 == 0;
    const dim3 grid(static_cast<unsigned>(column_blocks), static_cast<unsigned>(slices),
                    static_cast<unsigned>(p.batch));
    with_combine(a, [&]<bool kHere>() {
      pool_slices_then_claims<U, E, Rows, Packs, H, kHere><<<grid, kThreads, 0, a.stream>>>(
          a.tensor<const U>("x"), mask, partial, st, a.tensor<U>("y"), p.seq, p.hidden, rows_per_slice,
          rows_per_slice * slices, by16);
      if constexpr (!kHere)
        pooling::launch_combine<U>(a, p, partial, slices, st.claims, static_cast<int>(column_blocks));
    });
  });
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mean_pooling_fwd",
    .name = "fused_v3_dynamic_tail_rows",
    .role = Role::fused,
    .description =
        "fused_v2's slices over most of each sequence, the rest handed out a group of rows at a "
        "time by a counter so that the blocks end together; the sums meet by fp32 atomics and the "
        "last block of each column block writes y, so y's last bits vary from run to run",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = pooling::refuse_batch_beyond_grid,
    .workspace_bytes = workspace_bytes,
    .varies_run_to_run = true,
    .tunables =
        [] {
          auto t = pooling::slice_tunables();
          t.push_back(
              {"dynamic_percent",
               {10, 20, 5},
               "percent of each sequence's rows handed out by demand after the static slices"});
          t.push_back({"combine",
                       {kLastBlock, kSecondKernel},
                       "where the slices' sums meet: 1 a second kernel adds the fp32 partials (slice by slice; "
                       "which rows a partial holds still varies), 2 fp32 atomics into the sequence's row and "
                       "the last block of each column block writes y"});
          return t;
        }(),
    .prepare = prepare,
});

}  // namespace
}  // namespace kwb
