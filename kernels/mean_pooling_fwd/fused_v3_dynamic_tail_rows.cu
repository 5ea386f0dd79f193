// mean_pooling_fwd fused_v3_dynamic_tail_rows: fused_v2 (the same slices, 16-byte packs, fp32
// partials and the same combine) with the last rows of each sequence handed out by demand.
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
// Counters: zeroed once in prepare(); each launch's combine zeroes them again after its wait, when
// no slice block claims rows any more.
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

// Block (column block, slice, sequence): the slice's static share [slice * rows_per_slice, ...)
// below static_rows, then kClaimRows rows at a time from static_rows on, as the counter of its
// (sequence, column block) hands them out. One sum_kept_rows for both, so the kernel holds as few
// registers as fused_v2's (its residency sets the wave). Every thread stays for the barriers
// (those past the hidden size read nothing).
template <class T, int E, int Rows, int Packs, l2::Hint H>
__global__ void __launch_bounds__(kThreads)
    pool_slices_then_claims(const T* __restrict__ x, const bool* __restrict__ mask,
                            float* __restrict__ partial, int* __restrict__ counters,
                            std::int64_t seq, std::int64_t hidden, std::int64_t rows_per_slice,
                            std::int64_t static_rows) {
  const std::int64_t col = blockIdx.x * std::int64_t{kThreads} * E * Packs + threadIdx.x * E;
  const std::int64_t b = blockIdx.z, slice = blockIdx.y, slices = gridDim.y;
  const bool owns = col < hidden;
  int* counter = counters + b * gridDim.x + blockIdx.x;
  __shared__ int claimed[2];  // two, so that writing the next claim never races a read of this one
  // The first claim goes out now; its answer is first read after the static share.
  int ticket = threadIdx.x == 0 ? atomicAdd(counter, 1) : 0;
  const T* xb = x + b * seq * hidden + col;
  const bool* m = mask + b * seq;
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
  if (owns) pooling::store_partial<E, Packs>(partial, acc, b, slice, slices, col, hidden);
  allow_dependent_launch();
}

// The workspace: the counters (a sequence's column blocks at one pack a thread: the most any
// `packs` gives), then fused_v2's partials.
std::size_t counter_bytes(const PoolingAxes& p, int pack) {
  return align_up(
      static_cast<std::size_t>(p.batch * pooling::column_blocks(p.hidden, block_columns(pack, 1))) *
      sizeof(int));
}

std::size_t workspace_bytes(const Shape& s, DType dtype) {
  const PoolingAxes p = PoolingAxes::of(s);
  const int pack = pooling::pack_for(p.hidden, dtype);
  return counter_bytes(p, pack) +
         pooling::partial_bytes(p, block_columns(pack, 4));  // packs 4: the most slices
}

// Found once in prepare(): blocks of the case's kernel a multiprocessor holds at once (its
// registers set it: 8 for bf16's default, 64 registers), and the multiprocessors.
struct Residency {
  int blocks_per_sm = 0;
  int multiprocessors = 0;
};

template <class T, int E, int Rows, int Packs, l2::Hint H>
int resident_blocks() {
  int blocks = 0;
  cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                 &blocks, pool_slices_then_claims<T, E, Rows, Packs, H>, kThreads, 0),
             "occupancy of mean_pooling_fwd's slices");
  return std::max(blocks, 1);
}

template <class T>
int residency_of(const LaunchArgs& a, const PoolingAxes& p) {
  int blocks = 0;
  pooling::with_pack_and_rows<T>(a, p, [&]<class U, int E, int Packs, int Rows, l2::Hint H>() {
    blocks = resident_blocks<U, E, Rows, Packs, H>();
  });
  return blocks;
}

// Zeroes the counters (each launch's combine zeroes them again) and finds the residency.
std::shared_ptr<void> prepare(const LaunchArgs& a) {
  const PoolingAxes p = PoolingAxes::of(a.shape);
  cuda_check(cudaMemsetAsync(a.workspace, 0, counter_bytes(p, pooling::pack_for(p.hidden, a.dtype)),
                             a.stream),
             "zero mean_pooling_fwd's row counters");
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
    int* counters = static_cast<int*>(a.workspace);
    float* partial =
        reinterpret_cast<float*>(static_cast<unsigned char*>(a.workspace) +
                                 counter_bytes(p, pooling::pack_for(p.hidden, a.dtype)));
    const dim3 grid(static_cast<unsigned>(column_blocks), static_cast<unsigned>(slices),
                    static_cast<unsigned>(p.batch));
    pool_slices_then_claims<U, E, Rows, Packs, H><<<grid, kThreads, 0, a.stream>>>(
        a.tensor<const U>("x"), a.tensor<const bool>("mask"), partial, counters, p.seq, p.hidden,
        rows_per_slice, rows_per_slice * slices);
    pooling::launch_combine<U>(a, p, partial, slices, counters, static_cast<int>(column_blocks));
  });
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mean_pooling_fwd",
    .name = "fused_v3_dynamic_tail_rows",
    .role = Role::fused,
    .description =
        "fused_v2's slices over most of each sequence, the rest handed out a group of rows at a "
        "time by a counter so that the blocks end together; y's last bits vary from run to run",
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
          return t;
        }(),
    .prepare = prepare,
});

}  // namespace
}  // namespace kwb
