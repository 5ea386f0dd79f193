// softmax_fwd fused_v3_cluster_split_row: a long row split over a thread-block cluster, each
// block's chunk held in registers; one read, one write.
//
// Why: rows past one block's registers (64 KiB, fused_v1's limit) otherwise need x read twice
// (fused_v2: 3 streams, 67% of copy when the re-read misses L2). Here a cluster of up to 8
// blocks (the portable maximum on sm_90) shares a row: rank k loads chunk k of the row's
// 16-byte vectors into registers (up to 4 per thread at up to 1024 threads, 64 KiB), computes
// its (max, sum) with one block reduction as fused_v1 does, and publishes it in its shared
// memory. After a cluster barrier every block reads the cluster's states through distributed
// shared memory (DSMEM) and combines them in rank order, so all blocks hold the same bits,
// and writes its chunk from registers. Rank 0 also does the row's scalar head and tail. Rows
// up to 8 x 64 KiB = 512 KiB: 262144 bf16/fp16 or 131072 fp32 elements
// (kSoftmaxClusterRowBytes); longer rows are refused (fused_v2_online_two_pass covers them).
//
// Cluster size: the fewest blocks with chunks of at most 2048 vectors (32 KiB) when 8 blocks
// allow it, else chunks up to 4096 vectors: a row is spread over more SMs so that its load is
// in flight from more places at once.
//
// What it should reach: the minimum traffic (2 streams), so the copy ceiling less the phase
// gaps: each SM loads its chunk, waits at the cluster barrier for the slowest of the cluster's
// blocks, then stores; with one 1024-thread block per SM nothing overlaps these phases within
// an SM, but the other clusters' phases overlap in DRAM. At 256K bf16 a cluster-row moves
// 1 MiB, ~5.5 us at 16 clusters' share of 3 TB/s, against ~1 us of reduction, barrier and
// block start: ~85% of copy expected (fused_v2 estimate there: ~70%); 90% would need a second
// block per SM (chunks in shared memory, or 16-block clusters), the next step.
#include <cooperative_groups.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/vector_pack.cuh"
#include "kernels/softmax_fwd/online_softmax.cuh"
#include "reference/rows_cols_op.hpp"
#include "reference/softmax.hpp"

namespace kwb {
namespace {

namespace cg = cooperative_groups;

constexpr int kMaxThreads = 1024;

// Grid: rows * cluster_blocks blocks; block b handles chunk b % cluster_blocks of row
// b / cluster_blocks. chunk: vectors per block (the last chunk may be shorter or empty).
template <class T, int VPT>
__global__ void __launch_bounds__(kMaxThreads)
softmax_fwd_v3(const T* __restrict__ x, T* __restrict__ y, int cols, int chunk) {
  constexpr int E = RowSplit<T>::E;
  using P = Pack<T, E>;
  __shared__ MaxSum scratch[32];
  __shared__ MaxSum published;  // this block's state, read by the whole cluster
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int blocks = static_cast<int>(cluster.num_blocks());
  const std::int64_t row = blockIdx.x / blocks;
  const std::int64_t offset = row * cols;
  const T* xr = x + offset;
  T* yr = y + offset;
  const RowSplit<T> split = split_row(xr, cols);
  const P* xb = reinterpret_cast<const P*>(xr + split.head);
  P* yb = reinterpret_cast<P*>(yr + split.head);
  const int begin = rank * chunk;                  // this block's vectors: [begin, end)
  const int end = min(split.nvec, begin + chunk);

  P part[VPT];  // (VPT, E): vector begin + threadIdx.x + i * blockDim.x
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const int idx = begin + threadIdx.x + i * blockDim.x;
    if (idx < end) part[i] = xb[idx];
  }
  const bool has_edge = rank == 0 && static_cast<int>(threadIdx.x) < split.edge_count();
  const int edge_col = split.edge_col(threadIdx.x);
  const float edge = has_edge ? to_float(xr[edge_col]) : -INFINITY;

  float max = edge;
#pragma unroll
  for (int i = 0; i < VPT; ++i)
    if (begin + threadIdx.x + i * blockDim.x < end) {
#pragma unroll
      for (int e = 0; e < E; ++e) max = fmaxf(max, to_float(part[i].v[e]));
    }
  float sum = has_edge ? exp_shifted(edge, max) : 0.0f;
#pragma unroll
  for (int i = 0; i < VPT; ++i)
    if (begin + threadIdx.x + i * blockDim.x < end) {
#pragma unroll
      for (int e = 0; e < E; ++e) sum += exp_shifted(to_float(part[i].v[e]), max);
    }
  const MaxSum mine = block_combine({max, sum}, scratch);
  if (threadIdx.x == 0) published = mine;
  cluster.sync();  // every block's state is published (release/acquire across the cluster)
  MaxSum total = empty_max_sum();
  for (int k = 0; k < blocks; ++k) total = combine(total, *cluster.map_shared_rank(&published, k));
  cluster.sync();  // no block leaves (freeing its shared memory) while another still reads it
  const float inv_sum = 1.0f / total.sum;

  if (has_edge) yr[edge_col] = from_float<T>(exp_shifted(edge, total.max) * inv_sum);
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const int idx = begin + threadIdx.x + i * blockDim.x;
    if (idx < end) {
      P out;
#pragma unroll
      for (int e = 0; e < E; ++e) out.v[e] = from_float<T>(exp_shifted(to_float(part[i].v[e]), total.max) * inv_sum);
      yb[idx] = out;
    }
  }
}

struct ClusterPlan {
  int blocks = 1;              // cluster size, 1..8
  int chunk = 0;               // vectors per block
  int vectors_per_thread = 1;  // 1, 2 or 4
  int threads = 32;
};

// nullopt: the row does not fit in a cluster's registers.
std::optional<ClusterPlan> plan_for(std::int64_t cols, std::size_t elem_bytes) {
  if (cols * static_cast<std::int64_t>(elem_bytes) > kSoftmaxClusterRowBytes) return std::nullopt;
  const std::int64_t per_vector = 16 / static_cast<std::int64_t>(elem_bytes);
  const std::int64_t nvec = cols / per_vector;  // a misaligned row has fewer, never more
  ClusterPlan p;
  const std::int64_t target = (nvec + 2047) / 2048 <= kSoftmaxMaxClusterBlocks ? 2048 : 4096;
  while ((nvec + p.blocks - 1) / p.blocks > target) p.blocks *= 2;
  const std::int64_t chunk = (nvec + p.blocks - 1) / p.blocks;
  p.chunk = static_cast<int>(chunk);
  std::int64_t threads;
  if (chunk <= 1024) {
    while ((chunk + p.vectors_per_thread - 1) / p.vectors_per_thread > 256) p.vectors_per_thread *= 2;
    threads = (chunk + p.vectors_per_thread - 1) / p.vectors_per_thread;
  } else {
    p.vectors_per_thread = 4;
    threads = (chunk + 3) / 4;
  }
  threads = std::max(threads, 2 * (per_vector - 1));  // rank 0: one thread per head or tail element
  if (p.blocks > kSoftmaxMaxClusterBlocks || threads > kMaxThreads) return std::nullopt;
  p.threads = static_cast<int>((threads + 31) / 32 * 32);
  return p;
}

template <class T, int VPT>
void launch_cluster(const LaunchArgs& a, const RowsCols& shape, const ClusterPlan& plan) {
  const std::int64_t rows = shape.rows;
  const int cols = static_cast<int>(shape.cols);
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(rows * plan.blocks));
  config.blockDim = dim3(static_cast<unsigned>(plan.threads));
  config.dynamicSmemBytes = 0;
  config.stream = a.stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeClusterDimension;
  attribute[0].val.clusterDim.x = static_cast<unsigned>(plan.blocks);
  attribute[0].val.clusterDim.y = 1;
  attribute[0].val.clusterDim.z = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  const cudaError_t err = cudaLaunchKernelEx(&config, softmax_fwd_v3<T, VPT>, a.tensor<const T>("x"),
                                             a.tensor<T>("y"), cols, plan.chunk);
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("cluster launch (") + std::to_string(plan.blocks) +
                             " blocks of " + std::to_string(plan.threads) + " threads): " + cudaGetErrorString(err));
}

template <class T>
void launch(const LaunchArgs& a) {
  const RowsCols shape = RowsCols::of(a.shape);
  const auto plan = plan_for(shape.cols, sizeof(T));
  if (!plan) return;  // refused before launch; see refuse()
  switch (plan->vectors_per_thread) {
    case 1: launch_cluster<T, 1>(a, shape, *plan); break;
    case 2: launch_cluster<T, 2>(a, shape, *plan); break;
    default: launch_cluster<T, 4>(a, shape, *plan); break;
  }
}

KWB_REGISTER_VARIANT(Variant{
    .op = "softmax_fwd",
    .name = "fused_v3_cluster_split_row",
    .role = Role::fused,
    .description = "a row split over a cluster of up to 8 blocks in registers, (max, sum) combined through DSMEM",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse =
        [](const Shape& s, DType dtype) -> std::optional<std::string> {
          const auto [rows, cols] = RowsCols::of(s);
          const auto plan = plan_for(cols, dtype_size(dtype));
          if (!plan)
            return "a row over 512 KiB (262144 bf16/fp16 or 131072 fp32 elements) does not fit in 8 blocks' "
                   "registers; fused_v2_online_two_pass covers any length";
          if (rows * plan->blocks > 2147483647) return "rows x cluster blocks exceed the grid's x dimension";
          return std::nullopt;
        },
});

}  // namespace
}  // namespace kwb
