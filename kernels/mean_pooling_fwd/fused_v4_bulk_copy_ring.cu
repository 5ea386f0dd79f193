// mean_pooling_fwd fused_v4_bulk_copy_ring: fused_v2's contiguous slices and combine, with the rows
// brought into shared memory by the bulk copy engine instead of each thread's loads.
// Why: fused_v2 and fused_v3 keep their rows in flight in registers (4 rows of 16 bytes a thread
// in bf16), so the bytes a multiprocessor has in flight are set by the registers: 60-64 of them
// hold 8 blocks, about 64 KB. Deeper loads cost registers and so blocks (8 rows: slower; capping
// the registers to hold 9 or 10 blocks spills, and ran 1.6-2x slower, 2026-11-28 notebook). A
// ring of stages in shared memory holds as many bytes as it is deep, with no registers: one
// thread issues each stage's row copies (cp.async.bulk, one a kept row), they complete on the
// stage's mbarrier, and the block's threads add the stage out of shared memory.
//   - A block covers `packs` 2 KiB of a row (8 KiB at the default: a whole bf16 row of hidden
//     4096, so a slice reads one contiguous run of the sequence) and walks its slice's rows a
//     stage of `stage_rows` rows at a time through `stages` slots.
//   - The mask picks the rows: a dropped token is not copied. Warp 0 reads the next stage's mask
//     bytes a lane a row under the current stage's copies, so a copy never waits on its own mask.
//   - The grid is one resident wave (the occupancy of the ring's shared memory) of static slices:
//     the same rows always land in the same partial, so y is the same bits every run.
//   - A hidden size with no 16-byte rows (d 4099) cannot be bulk-copied; it takes fused_v2's
//     loads (single elements, 4 packs, 2 rows in flight: fused_v2's default there).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/hopper/mbarrier.cuh"
#include "kernels/common/hopper/tma.cuh"
#include "kernels/common/multiprocessors.hpp"
#include "kernels/mean_pooling_fwd/spread_combine.cuh"
#include "kernels/mean_pooling_fwd/token_slices.cuh"
#include "reference/mean_pooling.hpp"

namespace kwb {
namespace {

using pooling::block_columns;
using pooling::kThreads;

// The barriers and the stages' kept-row bits sit before the ring, in a 128-byte head.
constexpr int kMostStages = 8;
constexpr int kRingOffset = 128;
static_assert(kMostStages * (sizeof(std::uint64_t) + sizeof(unsigned)) <= kRingOffset);

std::size_t ring_bytes(int chunk_bytes, std::int64_t stage_rows, std::int64_t stages) {
  return kRingOffset + static_cast<std::size_t>(chunk_bytes * stage_rows * stages);
}

// Block (column chunk, slice, sequence) of 128 threads sums its slice's kept rows over columns
// [c0, c0 + 128 x E x Packs) into partial [batch, slices, hidden] (pooling::store_partial's
// layout: thread t owns packs t, t + 128, ... of the chunk, which is also a conflict-free read of
// the staged row). stage_rows x stages <= 32 (warp 0 reads the prologue's mask a lane a row).
template <class T, int Packs>
__global__ void __launch_bounds__(kThreads)
    pool_slices_bulk(const T* __restrict__ x, const bool* __restrict__ mask,
                     float* __restrict__ partial, std::int64_t seq, std::int64_t hidden,
                     std::int64_t rows_per_slice, int stage_rows, int stages) {
  constexpr int E = 16 / sizeof(T);
  constexpr int kChunk = kThreads * E * Packs;
  extern __shared__ __align__(128) unsigned char smem[];
  auto* full = reinterpret_cast<std::uint64_t*>(smem);           // [stages]: a stage's copies landed
  auto* kept = reinterpret_cast<unsigned*>(full + kMostStages);  // [stages]: which rows were copied
  T* ring = reinterpret_cast<T*>(smem + kRingOffset);            // [stages][stage_rows][kChunk]

  const std::int64_t c0 = blockIdx.x * std::int64_t{kChunk}, col = c0 + threadIdx.x * E;
  const std::int64_t b = blockIdx.z, slice = blockIdx.y, slices = gridDim.y;
  const std::int64_t first = std::min(seq, slice * rows_per_slice);
  const std::int64_t last = std::min(seq, first + rows_per_slice);
  const std::int64_t groups = (last - first + stage_rows - 1) / stage_rows;
  // hidden and c0 are multiples of E (the host checks), so the bytes are a multiple of 16.
  const auto bytes = static_cast<std::uint32_t>(std::min<std::int64_t>(kChunk, hidden - c0) * sizeof(T));
  const T* rows = x + b * seq * hidden + c0;  // row s of the chunk at rows + s * hidden
  const bool* m = mask + b * seq;
  const int lane = threadIdx.x % 32;
  const bool producer = threadIdx.x < 32;
  const unsigned stage_mask = (stage_rows == 32 ? ~0u : (1u << stage_rows) - 1);

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) hopper::mbar_init(&full[s], 1);
    hopper::fence_barrier_init();
  }
  __syncthreads();

  // Lane 0 sends group g's kept rows (bits) to slot g % stages.
  auto send = [&](std::int64_t g, unsigned bits) {
    const int slot = static_cast<int>(g % stages);
    kept[slot] = bits;  // published by the arrive (release), read after the wait (acquire)
    hopper::mbar_arrive_expect_tx(&full[slot], __popc(bits) * bytes);
    for (int r = 0; r < stage_rows; ++r)
      if (bits >> r & 1u)
        hopper::bulk_load(ring + (static_cast<std::int64_t>(slot) * stage_rows + r) * kChunk,
                          rows + (first + g * stage_rows + r) * hidden, bytes, &full[slot]);
  };
  // Lane l's mask byte of row l of group g (false past the slice).
  auto kept_byte = [&](std::int64_t g) {
    const std::int64_t s = first + g * stage_rows + lane;
    return lane < stage_rows && g < groups && s < last && m[s];
  };

  // Prologue: the first `stages` groups, their mask read a lane a row at once.
  bool next = false;  // lane l: row l of the group sent next
  if (producer) {
    const std::int64_t s = first + lane;
    const unsigned bits = __ballot_sync(~0u, lane < stage_rows * stages && s < last && m[s]);
    if (lane == 0)
      for (std::int64_t g = 0; g < std::min<std::int64_t>(stages, groups); ++g)
        send(g, bits >> (g * stage_rows) & stage_mask);
    next = kept_byte(stages);
  }

  float acc[Packs][E] = {};
  int slot = 0;
  std::uint32_t phase = 0;
  for (std::int64_t g = 0; g < groups; ++g) {
    hopper::mbar_wait(&full[slot], phase);
    const unsigned bits = kept[slot];
    for (int r = 0; r < stage_rows; ++r) {
      if (!(bits >> r & 1u)) continue;
      const T* row = ring + (static_cast<std::int64_t>(slot) * stage_rows + r) * kChunk + threadIdx.x * E;
#pragma unroll
      for (int k = 0; k < Packs; ++k) {
        if (col + k * kThreads * E >= hidden) break;
        const Pack<T, E> v = *reinterpret_cast<const Pack<T, E>*>(row + k * kThreads * E);
#pragma unroll
        for (int e = 0; e < E; ++e) acc[k][e] += to_float(v.v[e]);
      }
    }
    __syncthreads();  // every thread is done with the slot: it may be refilled
    if (producer && g + stages < groups) {
      const unsigned refill = __ballot_sync(~0u, next) & stage_mask;
      if (lane == 0) send(g + stages, refill);
      next = kept_byte(g + stages + 1);  // read under the copies just sent
    }
    if (++slot == stages) slot = 0, phase ^= 1u;
  }
  pooling::store_partial<E, Packs>(partial, acc, b, slice, slices, col, hidden);
  allow_dependent_launch();
}

// Found once in prepare(): how many blocks of the case's ring a multiprocessor holds.
struct Residency {
  int blocks_per_sm = 0;
  int multiprocessors = 0;
};

// Calls fn.template operator()<Packs>() with the `packs` tunable.
void with_packs(const LaunchArgs& a, auto&& fn) {
  if (a.tunable("packs") == 2)
    fn.template operator()<2>();
  else
    fn.template operator()<4>();
}

// Whether the rows can be bulk-copied: 16-byte rows and a 16-byte-aligned x.
bool bulk_rows(const LaunchArgs& a, const PoolingAxes& p, const void* x) {
  return pooling::pack_for(p.hidden, a.dtype) == static_cast<int>(16 / dtype_size(a.dtype)) &&
         reinterpret_cast<std::uintptr_t>(x) % 16 == 0;
}

template <class T>
std::shared_ptr<void> prepare_typed(const LaunchArgs& a) {
  auto state = std::make_shared<Residency>();
  state->multiprocessors = std::min(multiprocessor_count(), pooling::kMostMultiprocessors);
  with_packs(a, [&]<int Packs>() {
    const std::size_t smem = ring_bytes(kThreads * 16 * Packs, a.tunable("stage_rows"), a.tunable("stages"));
    cuda_check(cudaFuncSetAttribute(pool_slices_bulk<T, Packs>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
               "allow mean_pooling_fwd's ring its shared memory");
    int blocks = 0;
    cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, pool_slices_bulk<T, Packs>,
                                                             kThreads, smem),
               "occupancy of mean_pooling_fwd's ring");
    state->blocks_per_sm = std::clamp<int>(blocks, 1, pooling::kMostBlocksPerSm);
  });
  return state;
}

std::shared_ptr<void> prepare(const LaunchArgs& a) {
  std::shared_ptr<void> state;
  dispatch_dtype(a.dtype, [&](auto tag) { state = prepare_typed<decltype(tag)>(a); });
  return state;
}

template <class T>
void launch_typed(const LaunchArgs& a) {
  const PoolingAxes p = PoolingAxes::of(a.shape);
  const T* x = a.tensor<const T>("x");
  float* partial = static_cast<float*>(a.workspace);
  if (!bulk_rows(a, p, x)) {  // fused_v2's loads, at its default for such a hidden size
    pooling::launch_slices_and_combine<T, 1, 4, 2>(a, p, partial, pooling::kMostBlocksPerSm);
    return;
  }
  std::shared_ptr<void> own;  // only if the harness did not call prepare()
  if (a.state == nullptr) own = prepare(a);
  const auto& residency = *static_cast<const Residency*>(a.state ? a.state : own.get());
  const int stage_rows = static_cast<int>(a.tunable("stage_rows"));
  const int stages = static_cast<int>(a.tunable("stages"));
  with_packs(a, [&]<int Packs>() {
    constexpr int E = 16 / sizeof(T);
    const std::int64_t slices = pooling::slices_for(p, block_columns(E, Packs), residency.multiprocessors,
                                                    residency.blocks_per_sm, /*at_most_one_wave=*/true);
    const dim3 grid(static_cast<unsigned>(pooling::column_blocks(p.hidden, block_columns(E, Packs))),
                    static_cast<unsigned>(slices), static_cast<unsigned>(p.batch));
    pool_slices_bulk<T, Packs><<<grid, kThreads, ring_bytes(kThreads * 16 * Packs, stage_rows, stages), a.stream>>>(
        x, a.tensor<const bool>("mask"), partial, p.seq, p.hidden, (p.seq + slices - 1) / slices, stage_rows,
        stages);
    pooling::launch_combine<T>(a, p, partial, slices);
  });
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mean_pooling_fwd",
    .name = "fused_v4_bulk_copy_ring",
    .role = Role::fused,
    .description = "fused_v2's slices and combine with each kept row copied into a shared-memory ring by "
                   "the bulk copy engine (one wave, deterministic); rows with no 16-byte packs take "
                   "fused_v2's loads",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = pooling::refuse_batch_beyond_grid,
    .workspace_bytes =
        [](const Shape& s, DType dtype) {
          const PoolingAxes p = PoolingAxes::of(s);
          return pooling::partial_bytes(p, block_columns(pooling::pack_for(p.hidden, dtype), 4));  // the widest
        },
    .tunables = {{"packs", {4, 2}, "2 KiB parts of a row a block covers (16-byte packs a thread)"},
                 {"stage_rows", {2, 1, 4}, "rows a stage of the ring holds (one barrier, one refill)"},
                 {"stages", {4, 3, 6}, "stages of the ring: stages - 1 are in flight while one is added"}},
    .prepare = prepare,
});

}  // namespace
}  // namespace kwb
