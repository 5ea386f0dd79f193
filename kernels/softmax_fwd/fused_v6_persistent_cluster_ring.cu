// softmax_fwd fused_v6_persistent_cluster_ring: fused_v5's cluster-split row in shared memory,
// made PERSISTENT with DYNAMIC row claiming, and the per-row cluster exchange done by st.async +
// mbarrier instead of a cluster barrier; optionally a ring of slices so that the next row's loads
// are in flight while the current one is reduced and written (`buffers`).
//
// Why fused_v5 stops short of copy at 1024 x 262144 bf16: one cluster per row, 16384 CTAs in
// ~21 waves; every CTA lives load -> reduce -> cluster barrier -> write -> exit, a new cluster
// of 16 launches only when 16 slots are free in one GPC, and the last wave is partly empty.
// What changes here, and how each step compared with v5 (H100 SXM, bf16 1024 x 262144, timed
// with events in the same process):
//   1. Persistent clusters (grid = cudaOccupancyMaxActiveClusters for this launch, asked once
//      per case in prepare(), capped at rows), rows assigned statically c, c + nclusters, ...,
//      one cluster barrier per row with the published slot double-buffered: SLOWER than v5.
//      Two causes. (a) barrier.cluster.arrive.release compiles to MEMBAR.ALL.GPU: every thread
//      waits for ALL its outstanding memory operations - the previous row's stores and the next
//      row's prefetch - at every row (a ring of 2 was slower than 1). (b) Static rows: a cluster
//      on a busier SM is slower every row, and the total is the slowest cluster's.
//   2. The exchange by st.async (each CTA pushes its (max, sum) into every CTA's slot, completion
//      counted in bytes on the receiver's mbarrier; no fence, no barrier; see ring_combine), and
//      rows claimed from a global counter by rank 0 (one atomicAdd per row, issued a row ahead,
//      the claim sent to the cluster with that row's exchange): faster than v5 at the defaults.
//   With the MEMBAR gone and the work balanced, the ring barely matters: with 1 buffer a CTA's
//   next loads start right after its writes, and other CTAs on the SM cover the gap, while 2
//   buffers halve the CTAs per SM. So the default is 1 buffer (the ring stays a tunable).
// Buffer reuse needs no block barrier: thread t copies vectors t, t + threads, ... of every
// slice (cp.async), and reduces and writes exactly those, so the copy into a slot a previous row
// left is ordered after this same thread's reads of it (its stores consumed the values before).
//
// Napkin math: 2 streams (read x, write y), the minimum: at 1024 x 262144 bf16, 1.07 GB = 352 us
// at a 3052 GB/s copy ceiling. Default plan there: cluster 8, 64 KiB slices (within
// max_slice_kib = 64, so no doubling), 1 buffer, 256 threads: 3 CTAs per SM, ~40 clusters.
// Expected in kwb: ~90-91% of copy at 1024 x 262144, above v5 at every default shape.
// Measured: docs/results.md. Slices start on 128-byte lines (crow::kSliceAlignBytes): at
// 2048 x 128256, 16-byte alignment (32064-byte slices, every odd rank 64 bytes into a line) was
// clearly slower.
// Plans (crow::plan_for, then the cluster doubled up to 16 while a slice exceeds
// `max_slice_kib` or does not fit): default (8, 64 KiB): 8 CTAs of 64 KiB at 262144 bf16, 8 of
// 32 KiB at 131072, 4 at 32000 / 32768 bf16, 1 at 4096 (v5's shrink for short rows, down to one
// CTA per row: a cluster of one still exchanges with itself, one code path). The ring depth is
// `buffers`, reduced to what fits in one CTA's 220 KiB, so rows up to 16 x 220 KiB (1.8M bf16,
// 900K fp32 elements) run; longer ones are refused for fused_v2_online_two_pass.
// Workspace: two ints, the row counter and the count of clusters done. prepare() zeroes them once;
// the last cluster to finish a launch sets both back to zero for the next one (in the kernel, so
// the time a training step would spend on it is measured: no reset outside the timed interval).
//
// Numerics: identical to v5 at the same (cluster, threads) plan, bit for bit (checked on H100
// at every edge shape and dtype): exp(x - M) as exp2f(x log2e - M log2e) (fp32, no flush to
// zero), each slice's (max, sum) by the same block butterflies (crow::slice_max_sum), combined
// across the cluster in rank order from {-inf, 0} (crow::combine) in every warp of every CTA:
// the same bits everywhere and in every run, whichever cluster claims which row.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/cluster_row_smem.cuh"
#include "kernels/common/vector_pack.cuh"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

constexpr int kDefaultCluster = 8;
constexpr int kDefaultThreads = 256;
constexpr int kDefaultMaxSliceKib = 64;
constexpr int kDefaultBuffers = 1;
constexpr int kDefaultSliceAlign = crow::kSliceAlignBytes;
constexpr int kMaxBuffers = 3;

// ---------------------------------------------------------------------------------------------
// Host: the plan.

struct RingPlan {
  crow::Plan plan;  // cluster, threads, per_cta; smem_bytes = depth slices
  int depth = 1;    // slices in the ring
};

// crow::plan_for at `cluster`, the cluster doubled (up to 16) while a slice exceeds
// max_slice_kib KiB (or does not fit at all) and the row is long enough to keep the larger one;
// then the ring depth: `buffers`, or as many slices as fit in one CTA's shared memory.
std::optional<RingPlan> plan_v6(std::int64_t rows, std::int64_t cols, std::size_t elem_bytes, int cluster,
                                int threads, std::int64_t max_slice_kib, int buffers, int align_bytes,
                                std::string* why) {
  if (buffers < 1 || buffers > kMaxBuffers) {
    if (why) *why = "buffers must be 1, 2 or 3";
    return std::nullopt;
  }
  std::string reason;
  auto plan = crow::plan_for(rows, cols, elem_bytes, cluster, threads, &reason, align_bytes);
  while (cluster < crow::kMaxCluster &&
         (!plan || (static_cast<std::int64_t>(plan->smem_bytes) > max_slice_kib * 1024 && plan->cluster == cluster))) {
    // A failure other than the slice's size (threads, cols, grid) does not go away with a larger cluster.
    if (!plan && reason.find("exceeds one CTA's shared memory") == std::string::npos) break;
    cluster *= 2;
    std::string larger_reason;
    auto larger = crow::plan_for(rows, cols, elem_bytes, cluster, threads, &larger_reason, align_bytes);
    if (!larger && plan) break;  // keep the plan that exists
    plan = larger;
    reason = larger_reason;
  }
  if (!plan) {
    if (why) *why = reason;
    return std::nullopt;
  }
  RingPlan r;
  r.plan = *plan;
  const std::int64_t fit = crow::kMaxSliceBytes / static_cast<std::int64_t>(plan->smem_bytes);  // >= 1
  r.depth = static_cast<int>(std::min<std::int64_t>(buffers, fit));
  r.plan.smem_bytes = plan->smem_bytes * static_cast<std::size_t>(r.depth);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Device.

template <int N>
__device__ __forceinline__ void cp_async_wait_group() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Issues this thread's 16-byte cp.async copies of its CTA's slice of `row` into buf (thread t:
// vectors t, t + threads, ..., as crow::load_slice_async) and commits them as one group (an
// empty group past the last row, so that every iteration commits exactly one and
// wait_group(depth - 1) always means "row i has landed"). The CTA's edge scalar of the row (rank
// 0, misaligned head or tail), if this thread owns one, is loaded into `edge` (raw: converting
// it here would wait for the load).
template <class T>
__device__ __forceinline__ void issue_row(uint4* buf, const T* __restrict__ x, int row, int rows,
                                          int cols, int rank, int per_cta, T& edge) {
  if (row < rows) {
    const T* xr = x + static_cast<std::int64_t>(row) * cols;
    const crow::Slice<T> s(xr, cols, rank, per_cta);
    const uint4* src = reinterpret_cast<const uint4*>(xr + s.head) + s.v0;
    const int n = s.count();
    for (int i = static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x)) {
      const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(buf + i));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src + i) : "memory");
    }
    if (s.has_edge()) edge = xr[s.edge_col()];
  }
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// The row's exchange of (max, sum) across the cluster, with NO cluster barrier per row.
// Why not barrier.cluster: its arrive.release compiles to MEMBAR.ALL.GPU, which makes every
// thread wait until all of its outstanding memory operations have completed - the previous row's
// 16-byte stores AND the next row's cp.async loads just issued - so a barrier per row drains the
// prefetch the ring exists for (on H100, 2 buffers were slower than 1, and both well behind v5). Instead each CTA pushes its state into every CTA's (its own included) slot
// [parity][rank] with st.async, whose completion is counted in bytes on the receiver's mbarrier
// [parity]; the receiver expects C x 8 bytes (one arrive.expect_tx) and waits on that mbarrier
// (acquire, cluster scope). Neither side waits for anything but the C states.
// Why two slots (row parity) suffice: A sends row i + 2 into B's slots[p] only after A has
// received B's row i + 1 state, which B sends only after a block barrier (row i + 1's block
// reductions) that follows every B thread's reads of row i's slots[p]; and row i's phase of B's
// mbarrier[p] completed (B waited on it) before B sent row i + 1, so row i + 2's bytes land in the
// next phase (possibly before B's expect_tx for it: the tx-count may go negative within a phase,
// and the phase cannot complete without B's arrival).
struct alignas(16) Exchange {
  float4 slots[2][crow::kMaxCluster];  // [row parity][sender rank]: (max, sum, row claimed by rank 0, -)
  unsigned long long mbar[2];          // [row parity]: C x 8 bytes per phase
};

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Once, before any exchange: the mbarriers exist in every CTA of the cluster before any peer
// sends (the cluster barrier also makes sure every peer CTA is running).
__device__ __forceinline__ void exchange_init(Exchange* ex) {
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem_addr(&ex->mbar[0])) : "memory");
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem_addr(&ex->mbar[1])) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// The row's (max, sum) from every CTA's `mine` (already the same in all of this CTA's threads), in
// every thread: combined in rank order from {-inf, 0} (crow::combine, as v5's cluster_combine):
// the same bits in every warp and every CTA. use: this CTA's row iteration (parity = use & 1, the
// mbarrier's phase parity = (use >> 1) & 1). claimed: the row rank 0 claimed (only rank 0's is
// read); returned in every thread of every CTA as *next (a cluster of one stores its own slot
// and arrives on its mbarrier: the same wait and combine).
__device__ __forceinline__ crow::MaxSum ring_combine(crow::MaxSum mine, int claimed, Exchange* ex, int use, int rank,
                                                     int ranks, int* next) {
  const crow::MaxSum empty{-INFINITY, 0.0f};
  const int p = use & 1;
  const unsigned mbar = smem_addr(&ex->mbar[p]);
  const int lane = static_cast<int>(threadIdx.x & 31);
  if (threadIdx.x < 32) {
    claimed = __shfl_sync(0xffffffffu, claimed, 0);  // thread 0's claim, sent by every lane
    if (ranks == 1) {
      // A cluster of one: st.async needs a cluster of at least two CTAs (compute-sanitizer
      // memcheck), so the state is stored as usual and the arrival (release) publishes it.
      if (lane == 0) {
        ex->slots[p][0] = make_float4(mine.max, mine.sum, __int_as_float(claimed), 0.0f);
        asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(mbar) : "memory");
      }
    } else if (lane == 0) {
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(mbar), "r"(ranks * 16) : "memory");
    }
    if (ranks > 1 && lane < ranks) {  // lane k sends to rank k
      unsigned remote_slot, remote_mbar;
      asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
                   : "=r"(remote_slot)
                   : "r"(smem_addr(&ex->slots[p][rank])), "r"(lane));
      asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote_mbar) : "r"(mbar), "r"(lane));
      asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];\n" ::"r"(
                       remote_slot),
                   "f"(mine.max), "f"(mine.sum), "f"(__int_as_float(claimed)), "f"(0.0f), "r"(remote_mbar)
                   : "memory");
    }
  }
  const unsigned phase = static_cast<unsigned>((use >> 1) & 1);
  unsigned done = 0;
  while (!done)
    asm volatile(
        "{\n .reg .pred ready;\n"
        " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 ready, [%1], %2;\n"
        " selp.u32 %0, 1, 0, ready;\n}\n"
        : "=r"(done)
        : "r"(mbar), "r"(phase)
        : "memory");
  crow::MaxSum k_state = empty;
  if (lane < ranks) {
    const float4 v = ex->slots[p][lane];
    k_state = {v.x, v.y};
  }
  *next = __float_as_int(ex->slots[p][0].z);
  crow::MaxSum total = empty;
  for (int k = 0; k < ranks; ++k)
    total = crow::combine(total, {__shfl_sync(0xffffffffu, k_state.max, k), __shfl_sync(0xffffffffu, k_state.sum, k)});
  return total;
}

// Persistent: cluster c (of gridDim.x / C) takes rows c, c + nclusters, ... for its first kDepth
// iterations, then the rows rank 0 claims; every CTA of a cluster sees the same row sequence (the
// claims travel with the exchange), so the exchanges match. per_cta: body vectors per CTA,
// the ring: kDepth slots of per_cta vectors.
template <class T, int kDepth>
__global__ void __launch_bounds__(512)
softmax_fwd_v6(const T* __restrict__ x, T* __restrict__ y, int rows, int cols, int per_cta, int* __restrict__ counter) {
  constexpr int E = 16 / sizeof(T);
  using P = Pack<T, E>;
  extern __shared__ uint4 ring[];  // kDepth slots of per_cta vectors
  __shared__ float scratch[32];
  __shared__ Exchange exchange;

  const crow::cg::cluster_group cluster = crow::cg::this_cluster();
  const int C = static_cast<int>(cluster.num_blocks());
  const int rank = static_cast<int>(cluster.block_rank());
  const int nclusters = static_cast<int>(gridDim.x) / C;
  exchange_init(&exchange);

  // The rows of iterations i .. i + kDepth - 1 (a register queue: every index is static, so it
  // stays in registers): the first kDepth statically (cluster c: c, c + nclusters, ...), then
  // whatever rank 0 claims from the counter (rows kDepth x nclusters on, one per iteration, for
  // iteration i + kDepth, sent with iteration i's exchange). Rows past the end read as `rows`.
  int queue[kDepth];
#pragma unroll
  for (int j = 0; j < kDepth; ++j)
    queue[j] = static_cast<int>(min(static_cast<std::int64_t>(rows), blockIdx.x / C + static_cast<std::int64_t>(j) * nclusters));
  const std::int64_t dynamic_base = static_cast<std::int64_t>(kDepth) * nclusters;
  // edge[j]: the edge scalar of queue[j]'s row.
  T edge[kDepth];
#pragma unroll
  for (int j = 0; j < kDepth; ++j) edge[j] = from_float<T>(0.0f);
#pragma unroll
  for (int j = 0; j + 1 < kDepth; ++j)
    issue_row(ring + j * per_cta, x, queue[j], rows, cols, rank, per_cta, edge[j]);

  int slot = 0;  // i % kDepth
  int use = 0;
  while (queue[0] < rows) {
    const int row = queue[0];
    // The row of iteration i + kDepth, claimed early so that the atomic's latency hides behind
    // this row's wait and reduction.
    int claimed = rows;
    if (rank == 0 && threadIdx.x == 0)
      claimed = static_cast<int>(min(static_cast<std::int64_t>(rows), dynamic_base + atomicAdd(counter, 1)));
    // Row i + kDepth - 1 into the slot row i - 1 left (this thread's reads of it are done).
    const int next_slot = slot == 0 ? kDepth - 1 : slot - 1;
    issue_row(ring + next_slot * per_cta, x, queue[kDepth - 1], rows, cols, rank, per_cta, edge[kDepth - 1]);
    cp_async_wait_group<kDepth - 1>();  // row i's group (this thread's copies) has landed

    const uint4* buf = ring + slot * per_cta;
    const T* xr = x + static_cast<std::int64_t>(row) * cols;
    T* yr = y + static_cast<std::int64_t>(row) * cols;
    const crow::Slice<T> s(xr, cols, rank, per_cta);
    const int n = s.count();
    const bool has_edge = s.has_edge();
    const float edge_value = has_edge ? to_float(edge[0]) : -INFINITY;

    const crow::MaxSum mine = crow::slice_max_sum<T>(buf, n, has_edge, edge_value, scratch);
    int next_row;
    const crow::MaxSum total = ring_combine(mine, claimed, &exchange, use, rank, C, &next_row);

    const float inv_sum = 1.0f / total.sum;
    const float max_l2 = total.max * crow::kLog2e;
    if (has_edge) yr[s.edge_col()] = from_float<T>(exp2f(fmaf(edge_value, crow::kLog2e, -max_l2)) * inv_sum);
    crow::write_slice<T>(reinterpret_cast<uint4*>(yr + s.head) + s.v0, buf, n, [&](const P& in, int, P& out) {
#pragma unroll
      for (int e = 0; e < E; ++e)
        out.v[e] = from_float<T>(exp2f(fmaf(to_float(in.v[e]), crow::kLog2e, -max_l2)) * inv_sum);
    });

#pragma unroll
    for (int j = 0; j + 1 < kDepth; ++j) {
      edge[j] = edge[j + 1];
      queue[j] = queue[j + 1];
    }
    queue[kDepth - 1] = next_row;
    slot = slot + 1 == kDepth ? 0 : slot + 1;
    ++use;
  }
  // No CTA leaves before every CTA has received all of its states (its st.async into others
  // complete): relaxed, the mbarrier waits already ordered the data; this only holds the exit.
  if (C > 1) {
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
  }
  // Rank 0 alone claims rows, and its claims are all issued by now: the last cluster's rank 0 to
  // get here knows no claim of this launch is left and zeroes the counters for the next launch.
  if (rank == 0 && threadIdx.x == 0) {
    int* done = counter + 1;
    if (atomicAdd(done, 1) == nclusters - 1) {
      atomicExch(counter, 0);
      atomicExch(done, 0);
    }
  }
}

// The kernel for (T, depth) as a plain function pointer.
template <class T>
auto kernel_for(int depth) -> void (*)(const T*, T*, int, int, int, int*) {
  switch (depth) {
    case 1: return softmax_fwd_v6<T, 1>;
    case 2: return softmax_fwd_v6<T, 2>;
    default: return softmax_fwd_v6<T, 3>;
  }
}

// What a case launches: the plan, the kernel and the persistent grid (in clusters).
struct Setup {
  RingPlan ring;
  int clusters = 1;
};

template <class T>
Setup make_setup(const LaunchArgs& a) {
const auto [rows, cols] = RowsCols::of(a.shape);
  std::string why;
  const auto ring = plan_v6(rows, cols, sizeof(T), static_cast<int>(a.tunable("cluster")),
                            static_cast<int>(a.tunable("threads")), a.tunable("max_slice_kib"),
                            static_cast<int>(a.tunable("buffers")), static_cast<int>(a.tunable("slice_align")), &why);
  if (!ring) throw std::runtime_error("softmax_fwd fused_v6: " + why);
  const auto kernel = kernel_for<T>(ring->depth);
  // Before the occupancy query: it honours the opt-in shared-memory maximum and the cluster
  // permission (crow::launch_clustered sets the same once per kernel).
  (void)cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  (void)cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(crow::kMaxSliceBytes));
  (void)cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(ring->plan.cluster));
  config.blockDim = dim3(static_cast<unsigned>(ring->plan.threads));
  config.dynamicSmemBytes = ring->plan.smem_bytes;
  config.stream = a.stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeClusterDimension;
  attribute[0].val.clusterDim.x = static_cast<unsigned>(ring->plan.cluster);
  attribute[0].val.clusterDim.y = 1;
  attribute[0].val.clusterDim.z = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  int resident = 0;
  const cudaError_t err = cudaOccupancyMaxActiveClusters(&resident, kernel, &config);
  if (err != cudaSuccess || resident < 1)
    throw std::runtime_error("softmax_fwd fused_v6: no cluster of " + std::to_string(ring->plan.cluster) + " CTAs of " +
                             std::to_string(ring->plan.threads) + " threads and " +
                             std::to_string(ring->plan.smem_bytes) + " bytes of shared memory fits: " +
                             cudaGetErrorString(err));
  // As many rounds of rows as the resident clusters need, and no more clusters than those
  // rounds need (the same time; fewer clusters contending).
  const std::int64_t rounds = (rows + resident - 1) / resident;
  Setup setup;
  setup.ring = *ring;
  setup.clusters = static_cast<int>((rows + rounds - 1) / rounds);
  return setup;
}

constexpr std::size_t kCounterBytes = 2 * sizeof(int);  // row counter, clusters done

// The launch's setup once per case; the counters start at zero (each launch leaves them so).
std::shared_ptr<void> prepare(const LaunchArgs& a) {
  std::shared_ptr<void> state;
  dispatch_dtype(a.dtype, [&](auto tag) { state = std::make_shared<Setup>(make_setup<decltype(tag)>(a)); });
  if (a.workspace) (void)cudaMemsetAsync(a.workspace, 0, kCounterBytes, a.stream);
  return state;
}

template <class T>
void launch(const LaunchArgs& a) {
const auto [rows, cols] = RowsCols::of(a.shape);
  const Setup setup = a.state ? a.state_as<Setup>() : make_setup<T>(a);
  if (!a.workspace) throw std::runtime_error("softmax_fwd fused_v6: no workspace for the row counter");
  crow::launch_clustered(kernel_for<T>(setup.ring.depth), setup.ring.plan, setup.clusters, a.stream,
                         a.tensor<const T>("x"), a.tensor<T>("y"), static_cast<int>(rows),
                         static_cast<int>(cols), setup.ring.plan.per_cta, static_cast<int*>(a.workspace));
}

KWB_REGISTER_VARIANT(Variant{
    .op = "softmax_fwd",
    .name = "fused_v6_persistent_cluster_ring",
    .role = Role::fused,
    .description = "persistent clusters claiming rows from a counter, a row split over the cluster in shared memory, "
                   "(max, sum) exchanged by st.async + mbarrier (no cluster barrier per row), optional ring of "
                   "slices prefetching the next row; one read, one write",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse =
        [](const Shape& s, DType dtype) -> std::optional<std::string> {
          std::string why;
          const auto [rows, cols] = RowsCols::of(s);
          if (!plan_v6(rows, cols, dtype_size(dtype), kDefaultCluster, kDefaultThreads,
                       kDefaultMaxSliceKib, kDefaultBuffers, kDefaultSliceAlign, &why))
            return why + "; fused_v2_online_two_pass covers any length";
          return std::nullopt;
        },
    .workspace_bytes = [](const Shape&, DType) -> std::size_t { return kCounterBytes; },
    .tunables = {{"cluster", {kDefaultCluster, 16, 4, 2, 1},
                  "CTAs per row for long rows (16: non-portable cluster size); shorter rows take fewer, longer "
                  "ones more (max_slice_kib)"},
                 {"threads", {kDefaultThreads, 128, 512}, "threads per CTA"},
                 {"max_slice_kib", {kDefaultMaxSliceKib, 32, 220},
                  "the cluster doubles (up to 16) while a CTA's slice would exceed this many KiB (220: never)"},
                 {"buffers", {kDefaultBuffers, 2, 3},
                  "slices in each CTA's ring (rows in flight + 1), fewer where they would not fit in 220 KiB"},
                 {"slice_align", {kDefaultSliceAlign, 16},
                  "bytes between slice starts rounded up to a multiple of this (128: whole cache lines)"}},
    .prepare = prepare,
});

}  // namespace
}  // namespace kwb
