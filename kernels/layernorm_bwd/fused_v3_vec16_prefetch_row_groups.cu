// layernorm_bwd fused_v3_vec16_prefetch_row_groups: v2's prefetch (the next row's x and dy
// loaded during this row's reductions) with the row's thread count chosen by the row length, so
// that it covers longer rows and keeps several short rows in flight per block.
//
// Why: v2 gives every row a 256-thread block. Rows over 512 vectors do not fit (refused, v1 runs
// them at 73.5% at 16384 x 8192), and short rows (768-2048 cols: 96-256 vectors) leave most of
// the block's threads idle or the block's two barriers per row dominating (42-55%).
// Here a row group of TPR threads (a power of two, 32..1024, TPR * VPT >= the row's vectors)
// owns one row at a time; a block of 256 threads holds 256 / TPR groups, each on its own row,
// and their reductions share one pair of barriers. Long rows: one group of 512 threads with two
// vectors each (or 1024 with one: the `vectors_per_thread` tunable), one block per SM, still two
// rows (current + prefetched) in flight per block: 32 KB of reads outstanding per SM at 8192 bf16
// columns, above the ~23 KB Little's law asks for (3 TB/s x ~1 us / 132 SMs).
// Groups of a block accumulate dweight/dbias for their own rows; at the end they are added in
// group order through shared memory (deterministic), and the block writes one row of partials.
// Expected (H100 bf16): 16384 x 8192 >= 80% of the copy ceiling (v2's 80% at 4096 cols, same
// bytes in flight per SM); 768-2048 cols 60-70% (4-8 rows in flight per block instead of one);
// 4096 cols as v2. Rows over 1024 vectors (bf16 > 8192 + 7 cols) are refused: v1 runs them.
#include <algorithm>
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/block_reduce.cuh"
#include "kernels/common/norm_backward_launch.cuh"
#include "kernels/common/row_in_registers.cuh"
#include "kernels/common/vector_pack.cuh"
#include "kernels/layernorm_bwd/row_backward.cuh"
#include "reference/layernorm.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

namespace rr = norm_backward::register_rows;  // the grid, workspace and both launches

constexpr int kShortBlock = 256;  // threads of a block of several row groups
constexpr int kMaxVectors = 1024;  // the longest row, in 16-byte vectors

// Sums of N (<= 3) floats over each row group of TPR threads (a multiple of 32), all groups at
// once: every thread gets its group's totals. Called by every thread of the block (two barriers).
// group_scratch: this group's 3 x 32 floats.
template <int TPR, int N>
__device__ __forceinline__ void group_sums(float (&v)[N], float* group_scratch) {
  static_assert(N <= 3, "scratch holds three sums per group");
  constexpr int kWarps = TPR / 32;  // per group
  const int lane = threadIdx.x & 31, warp = (threadIdx.x % TPR) >> 5;
#pragma unroll
  for (int k = 0; k < N; ++k) v[k] = warp_sum(v[k]);
  if constexpr (kWarps > 1) {
    __syncthreads();  // scratch may still be read by a previous call
    if (lane == 0) {
#pragma unroll
      for (int k = 0; k < N; ++k) group_scratch[k * 32 + warp] = v[k];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < N; ++k) v[k] = warp_sum(lane < kWarps ? group_scratch[k * 32 + lane] : 0.0f);
  }
}

// partials: (gridDim.x, 2, cols), dweight then dbias. Group g of block b takes rows
// (b * GROUPS + g) + k * gridDim.x * GROUPS; gridDim.x * GROUPS is a multiple of E when cols is
// not, so each group's rows share one split.
template <class T, int VPT, int TPR, int GROUPS>
__global__ void __launch_bounds__(TPR * GROUPS, (TPR * GROUPS <= 256 ? 2 : 1))
layernorm_bwd_v3(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ dy, T* __restrict__ dx,
                 float* __restrict__ partials, std::int64_t rows, int cols, float eps) {
  constexpr int E = RowSplit<T>::E;
  using P = Pack<T, E>;
  __shared__ float scratch[GROUPS][3][32];
  extern __shared__ float combine[];  // (2, cols) when GROUPS > 1
  const int g = threadIdx.x / TPR, t = threadIdx.x % TPR;
  float* group_scratch = &scratch[g][0][0];
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * GROUPS;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * GROUPS;  // the block's first row
  const RowSplit<T> split((first + g) * cols, cols);  // the same for every row of this group
  const bool has_edge = t < split.edge_count;
  const int edge_col = split.edge_col(t);
  const float inv_cols = 1.0f / static_cast<float>(cols);

  float dw[VPT][E] = {}, db[VPT][E] = {};  // this thread's columns: sums over the group's rows
  float dw_edge = 0, db_edge = 0;

  auto load_row = [&](std::int64_t r, P (&xs)[VPT], P (&dys)[VPT], float& x_e, float& dy_e) {
    const std::int64_t row_start = r * cols;
    const P* xb = reinterpret_cast<const P*>(x + row_start + split.head);
    const P* dyb = reinterpret_cast<const P*>(dy + row_start + split.head);
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      const int idx = t + i * TPR;
      if (idx < split.nvec) {
        load_vector16(xs[i], xb + idx);
        load_vector16(dys[i], dyb + idx);
      }
    }
    if (has_edge) {
      x_e = to_float(x[row_start + edge_col]);
      dy_e = to_float(dy[row_start + edge_col]);
    }
  };

  P xv[VPT], dyv[VPT];
  float x_edge = 0, dy_edge = 0;
  if (first + g < rows) load_row(first + g, xv, dyv, x_edge, dy_edge);
  // The loop bound is the block's (uniform: every thread reaches the barriers); a group whose
  // row is past the end computes on stale registers and stores nothing.
  for (std::int64_t base = first; base < rows; base += stride) {
    const std::int64_t r = base + g;
    const std::int64_t row_start = r * cols;
    P xn[VPT], dyn[VPT];
    float xn_edge = 0, dyn_edge = 0;
    if (r + stride < rows) load_row(r + stride, xn, dyn, xn_edge, dyn_edge);

    layernorm_row_backward<T, VPT>(xv, dyv, x_edge, dy_edge, has_edge, edge_col, split, w, dx + row_start, inv_cols,
                                   eps, RowThreads{t, TPR, r < rows},
                                   [&](auto& v) { group_sums<TPR>(v, group_scratch); }, dw, db, dw_edge, db_edge);
#pragma unroll
    for (int i = 0; i < VPT; ++i) {  // as uint4: a Pack<bf16> assignment can go through local memory
      *reinterpret_cast<uint4*>(&xv[i]) = *reinterpret_cast<const uint4*>(&xn[i]);
      *reinterpret_cast<uint4*>(&dyv[i]) = *reinterpret_cast<const uint4*>(&dyn[i]);
    }
    x_edge = xn_edge;
    dy_edge = dyn_edge;
  }

  // The block's row of partials: groups added in group order (0 first) through `combine`; each
  // group covers every column exactly once (head, body and tail), the last one writes.
  float* pw = partials + static_cast<std::int64_t>(blockIdx.x) * 2 * cols;
  float* pb = pw + cols;
  auto emit = [&](int col, float vw, float vb) {
    if constexpr (GROUPS == 1) {
      pw[col] = vw;
      pb[col] = vb;
    } else if (g == 0) {
      combine[col] = vw;
      combine[cols + col] = vb;
    } else if (g < GROUPS - 1) {
      combine[col] += vw;
      combine[cols + col] += vb;
    } else {
      pw[col] = combine[col] + vw;
      pb[col] = combine[cols + col] + vb;
    }
  };
#pragma unroll 1
  for (int turn = 0; turn < GROUPS; ++turn) {
    if (g == turn) {
      if (has_edge) emit(edge_col, dw_edge, db_edge);
#pragma unroll
      for (int i = 0; i < VPT; ++i) {
        const int idx = t + i * TPR;
        if (idx < split.nvec) {
#pragma unroll
          for (int e = 0; e < E; ++e) emit(split.head + idx * E + e, dw[i][e], db[i][e]);
        }
      }
    }
    if constexpr (GROUPS > 1) __syncthreads();
  }
}

// The kernel for the row length and vectors per thread (1 or 2), or none (too long).
// TPR: the least power of two >= 32 with TPR * vpt >= the row's vectors and TPR >= 2 * (E - 1)
// (the scalar head and tail). Short rows: 256 / TPR groups per block, which add their column sums
// through a (2, cols) float buffer of dynamic shared memory (set by pick_kernel).
template <class T, int VPT>
rr::Pick<T> pick_for(int nvec) {
  int tpr = 32;
  while (tpr * VPT < nvec) tpr *= 2;
  const int limit = VPT == 1 ? 1024 : 512;  // 1024 x 2 would need 128 registers at 64 available
  if (tpr > limit) return {};
  const int groups = std::max(1, kShortBlock / tpr);
  auto pick = [&](rr::Kernel<T> kernel) { return rr::Pick<T>{kernel, tpr * groups, groups}; };
  switch (tpr) {
    case 32: return pick(layernorm_bwd_v3<T, VPT, 32, kShortBlock / 32>);
    case 64: return pick(layernorm_bwd_v3<T, VPT, 64, kShortBlock / 64>);
    case 128: return pick(layernorm_bwd_v3<T, VPT, 128, kShortBlock / 128>);
    case 256: return pick(layernorm_bwd_v3<T, VPT, 256, 1>);
    case 512: return pick(layernorm_bwd_v3<T, VPT, 512, 1>);
    default:
      if constexpr (VPT == 1) return pick(layernorm_bwd_v3<T, 1, 1024, 1>);
      return {};
  }
}

template <class T>
rr::Pick<T> pick_kernel(const LaunchArgs& a) {
  const auto cols = static_cast<int>(RowsCols::of(a.shape).cols);
  const std::int64_t vpt = a.tunables ? a.tunable("vectors_per_thread") : 2;
  const int nvec = cols / RowSplit<T>::E;  // a misaligned row has fewer, never more
  if (nvec > kMaxVectors) return {};
  auto picked = vpt == 1 ? pick_for<T, 1>(nvec) : pick_for<T, 2>(nvec);
  if (!picked.kernel && vpt != 1) picked = pick_for<T, 1>(nvec);  // 1024 threads x 1 vector
  if (picked.rows_per_cta > 1) picked.smem_bytes = static_cast<std::size_t>(2) * cols * sizeof(float);
  return picked;
}

KWB_REGISTER_VARIANT(Variant{
    .op = "layernorm_bwd",
    .name = "fused_v3_vec16_prefetch_row_groups",
    .role = Role::fused,
    .description = "v2's prefetch, threads per row sized to the row: several short rows per block, "
                   "rows up to 1024 vectors",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { rr::launch<T>(a, pick_kernel<T>(a), kLayerNormEps); }),
    .refuse =
        [](const Shape& s, DType dtype) -> std::optional<std::string> {
          if (RowsCols::of(s).cols / (16 / static_cast<std::int64_t>(dtype_size(dtype))) > kMaxVectors)
            return "rows over 1024 16-byte vectors do not fit two rows in registers; use fused_v1_vec16_partials";
          return std::nullopt;
        },
    .workspace_bytes = [](const Shape& s, DType) { return rr::workspace_bytes(RowsCols::of(s)); },
    .tunables = {{"vectors_per_thread", {2, 1}, "16-byte vectors per thread: 2 (fewer threads per row, more rows per "
                                                "block) or 1 (1024 threads for 8192 bf16 columns)"}},
    .prepare = [](const LaunchArgs& a) {
      return rr::prepare(a, []<class T>(const LaunchArgs& a) { return pick_kernel<T>(a); });
    },
});

}  // namespace
}  // namespace kwb
