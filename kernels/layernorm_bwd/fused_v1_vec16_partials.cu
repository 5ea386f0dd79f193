// layernorm_bwd fused_v1_vec16_partials: dx, dweight and dbias in one pass over x and dy, plus a
// small deterministic second launch that sums the per-block partials of dweight and dbias.
//
// Launch 1: a grid of about one wave of blocks (occupancy x SMs), each looping over rows
// r = block, block + grid, ... Per row: x and dy held in registers as 16-byte vectors; mean (one
// block sum), then the variance, sum(g) and sum(g * (x - mean)) in one block sum of three
// (g = weight * dy; mean(g * xhat) = rstd * mean(g * (x - mean)), so the two-pass statistics cost
// no extra reduction); dx written once. Each thread keeps fp32 sums of dy * xhat and dy for the
// columns it owns, across all the block's rows, and writes them as the block's row of partials at
// the end. When cols is not a multiple of the vector width E, the grid is, so every row of a block
// starts at the same offset modulo E: head/body/tail (and so the columns each thread owns) are
// the same for all its rows, at any cols.
// Launch 2: sum_partial_columns (kernels/common/column_partials.cuh) adds the partials of each
// column in a fixed order: the same bits on every run, no atomics. The grid, the workspace and
// both launches are norm_backward_launch.cuh's register_rows (shared with v2 and v3).
//
// Napkin math at 16384 x 4096 bf16: x, dy read and dx written, 3 * 128 MiB = 403 MB (~133 us at
// ~3030 GB/s); the partials, ~400 rows x 2 x 4096 fp32 = 13 MB written and read back, mostly
// from L2. Expected: >= 80% of the copy ceiling (the eager chain runs 31 launches).
//
// Rows over 2048 vectors (bf16 > 16384 cols, fp32 > 8192) would need more registers than 512
// threads have: they take a plain kernel that rereads the row three times and adds the block's
// dweight and dbias sums into its own row of partials in global memory (owned by one thread per
// column, so no races): correct at any length, not tuned.
#include <climits>
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

constexpr int kMaxThreads = 512;  // 128 registers per thread: x, dy and the column sums fit

// VPT: 16-byte vectors per thread. partials: (gridDim.x, 2, cols), dweight then dbias.
// Short rows (VPT <= 2, <= 256 threads) ask for 4 or 3 blocks per SM (64 or 85 registers per thread),
// enough rows in flight per SM to cover DRAM latency; VPT 4 takes up to 128 registers at 512 threads.
template <int VPT>
constexpr int kMinBlocks = VPT == 1 ? 4 : VPT == 2 ? 3 : 1;
template <int VPT>
constexpr int kBoundThreads = VPT <= 2 ? 256 : kMaxThreads;

template <class T, int VPT>
__global__ void __launch_bounds__(kBoundThreads<VPT>, kMinBlocks<VPT>)
layernorm_bwd_v1(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ dy, T* __restrict__ dx,
                 float* __restrict__ partials, std::int64_t rows, int cols, float eps) {
  constexpr int E = RowSplit<T>::E;
  using P = Pack<T, E>;
  __shared__ float scratch[3 * 32];
  // The same for every row of this block: cols or gridDim.x is a multiple of E.
  const RowSplit<T> split(static_cast<std::int64_t>(blockIdx.x) * cols, cols);
  const bool has_edge = threadIdx.x < split.edge_count;
  const int edge_col = split.edge_col(threadIdx.x);
  const float inv_cols = 1.0f / static_cast<float>(cols);

  float dw[VPT][E] = {}, db[VPT][E] = {};  // this thread's columns: sums over the block's rows
  float dw_edge = 0, db_edge = 0;

  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const std::int64_t row_start = r * cols;
    const P* xb = reinterpret_cast<const P*>(x + row_start + split.head);
    const P* dyb = reinterpret_cast<const P*>(dy + row_start + split.head);
    P xv[VPT], dyv[VPT];  // (VPT, E)
    float x_edge = 0, dy_edge = 0;
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      const int idx = threadIdx.x + i * blockDim.x;
      if (idx < split.nvec) {
        load_vector16(xv[i], xb + idx);
        load_vector16(dyv[i], dyb + idx);
      }
    }
    if (has_edge) {
      x_edge = to_float(x[row_start + edge_col]);
      dy_edge = to_float(dy[row_start + edge_col]);
    }

    layernorm_row_backward<T, VPT>(xv, dyv, x_edge, dy_edge, has_edge, edge_col, split, w, dx + row_start, inv_cols,
                                   eps, whole_block(), [&](auto& v) { block_sums(v, scratch); }, dw, db, dw_edge,
                                   db_edge);
  }

  // The block's row of partials: every column exactly once (head, body and tail cover the row).
  float* pw = partials + static_cast<std::int64_t>(blockIdx.x) * 2 * cols;
  float* pb = pw + cols;
  if (has_edge) {
    pw[edge_col] = dw_edge;
    pb[edge_col] = db_edge;
  }
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const int idx = threadIdx.x + i * blockDim.x;
    if (idx < split.nvec) {
#pragma unroll
      for (int e = 0; e < E; ++e) {
        pw[split.head + idx * E + e] = dw[i][e];
        pb[split.head + idx * E + e] = db[i][e];
      }
    }
  }
}

// Rows too long for registers: per row, three strided passes (sum; squared deviations, g and
// g * (x - mean); dx) rereading x and dy, with dweight and dbias added into the block's row of
// partials. Column c is only ever touched by thread c % blockDim.x of this block: no races.
template <class T>
__global__ void __launch_bounds__(kMaxThreads)
layernorm_bwd_long_rows(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ dy,
                        T* __restrict__ dx, float* __restrict__ partials, std::int64_t rows, int cols, float eps) {
  __shared__ float scratch[3 * 32];
  const float inv_cols = 1.0f / static_cast<float>(cols);
  float* pw = partials + static_cast<std::int64_t>(blockIdx.x) * 2 * cols;
  float* pb = pw + cols;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) pw[c] = pb[c] = 0.0f;
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * cols;
    const T* dyr = dy + r * cols;
    T* dxr = dx + r * cols;
    float sum = 0;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += to_float(xr[c]);
    const float mean = block_sum(sum, scratch) * inv_cols;
    float sums[3] = {0, 0, 0};
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
      const float d = to_float(xr[c]) - mean, g = to_float(w[c]) * to_float(dyr[c]);
      sums[0] += d * d;
      sums[1] += g;
      sums[2] += g * d;
    }
    block_sums<3>(sums, scratch);
    const float rstd = rsqrtf(sums[0] * inv_cols + eps);
    const float mean_g = sums[1] * inv_cols, mean_g_xhat = sums[2] * inv_cols * rstd;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
      const float xhat = (to_float(xr[c]) - mean) * rstd, d_y = to_float(dyr[c]);
      dxr[c] = from_float<T>(rstd * (to_float(w[c]) * d_y - mean_g - xhat * mean_g_xhat));
      pw[c] += d_y * xhat;
      pb[c] += d_y;
    }
  }
}

// The kernel for the row length: row_plan's vectors per thread, or the plain one for long rows.
template <class T>
rr::Pick<T> pick_kernel(const LaunchArgs& a) {
  const auto plan = row_plan(RowsCols::of(a.shape).cols, sizeof(T), kMaxThreads);
  if (!plan) return {layernorm_bwd_long_rows<T>, kMaxThreads};
  switch (plan->vectors_per_thread) {  // row_plan gives 1, 2 or 4
    case 1: return {layernorm_bwd_v1<T, 1>, plan->threads};
    case 2: return {layernorm_bwd_v1<T, 2>, plan->threads};
    default: return {layernorm_bwd_v1<T, 4>, plan->threads};
  }
}

KWB_REGISTER_VARIANT(Variant{
    .op = "layernorm_bwd",
    .name = "fused_v1_vec16_partials",
    .role = Role::fused,
    .description = "x, dy in registers as 16-byte vectors; dx plus per-block dweight/dbias partials in one "
                   "pass, then a deterministic column sum",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { rr::launch<T>(a, pick_kernel<T>(a), kLayerNormEps); }),
    .refuse =
        [](const Shape& s, DType) -> std::optional<std::string> {
          if (RowsCols::of(s).cols > INT_MAX / 2) return "cols above 2^30 exceed the kernel's 32-bit column index";
          return std::nullopt;
        },
    .workspace_bytes = [](const Shape& s, DType) { return rr::workspace_bytes(RowsCols::of(s)); },
    .prepare = [](const LaunchArgs& a) {
      return rr::prepare(a, []<class T>(const LaunchArgs& a) { return pick_kernel<T>(a); });
    },
});

}  // namespace
}  // namespace kwb
