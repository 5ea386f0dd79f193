// layernorm_bwd fused_v2_vec16_prefetch: v1 with the next row's x and dy loaded before the
// current row's reductions (software pipelining), for rows of up to 512 vectors (bf16/fp16
// <= 4096 + 7 cols, fp32 <= 2048 + 3); longer rows are refused (fused_v1_vec16_partials runs them).
//
// Why: v1 keeps each block's loads and its two block reductions in sequence, so a row's DRAM
// latency is hidden only by the other blocks on the SM (3 at 256 threads and 80 registers). Here
// the loads of row r + grid are in flight while row r is reduced and written: each block keeps
// 16-32 KB of reads outstanding most of the time instead of part of it. The price is 16 more
// registers (bf16), so 2 blocks of 256 threads per SM instead of 3. Everything else (row split,
// column ownership, partials, the deterministic column sum, norm_backward_launch.cuh's
// register_rows grid and launches) is v1's; see its header.
// Expected at 16384 x 4096 bf16: >= v1, aiming at ~85-90% of the copy ceiling; the lead's H100
// run decides which of the two is promoted.
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

// VPT: 16-byte vectors per thread (1 or 2), at most 256 threads, 2 blocks per SM (128 registers:
// two rows of x and dy, and the column sums). partials: (gridDim.x, 2, cols), dweight then dbias.
constexpr int kRowThreads = 256;

template <class T, int VPT>
__global__ void __launch_bounds__(kRowThreads, 2)
layernorm_bwd_v2(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ dy, T* __restrict__ dx,
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

  // Row r's x and dy: body vectors and this thread's head or tail element.
  auto load_row = [&](std::int64_t r, P (&xs)[VPT], P (&dys)[VPT], float& x_e, float& dy_e) {
    const std::int64_t row_start = r * cols;
    const P* xb = reinterpret_cast<const P*>(x + row_start + split.head);
    const P* dyb = reinterpret_cast<const P*>(dy + row_start + split.head);
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      const int idx = threadIdx.x + i * blockDim.x;
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

  P xv[VPT], dyv[VPT];  // (VPT, E): the current row
  float x_edge = 0, dy_edge = 0;
  if (blockIdx.x < rows) load_row(blockIdx.x, xv, dyv, x_edge, dy_edge);
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const std::int64_t row_start = r * cols;
    P xn[VPT], dyn[VPT];  // (VPT, E): the next row, in flight during this row's reductions
    float xn_edge = 0, dyn_edge = 0;
    if (r + gridDim.x < rows) load_row(r + gridDim.x, xn, dyn, xn_edge, dyn_edge);

    layernorm_row_backward<T, VPT>(xv, dyv, x_edge, dy_edge, has_edge, edge_col, split, w, dx + row_start, inv_cols,
                                   eps, whole_block(), [&](auto& v) { block_sums(v, scratch); }, dw, db, dw_edge,
                                   db_edge);
#pragma unroll
    for (int i = 0; i < VPT; ++i) {  // as uint4: a Pack<bf16> assignment can go through local memory
      *reinterpret_cast<uint4*>(&xv[i]) = *reinterpret_cast<const uint4*>(&xn[i]);
      *reinterpret_cast<uint4*>(&dyv[i]) = *reinterpret_cast<const uint4*>(&dyn[i]);
    }
    x_edge = xn_edge;
    dy_edge = dyn_edge;
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

// The kernel for the row length, or none (longer than 512 vectors: refused).
template <class T>
rr::Pick<T> pick_kernel(const LaunchArgs& a) {
  const auto plan = row_plan(RowsCols::of(a.shape).cols, sizeof(T), kRowThreads);
  if (!plan || plan->vectors_per_thread > 2) return {};
  if (plan->vectors_per_thread == 1) return {layernorm_bwd_v2<T, 1>, plan->threads};
  return {layernorm_bwd_v2<T, 2>, plan->threads};
}

KWB_REGISTER_VARIANT(Variant{
    .op = "layernorm_bwd",
    .name = "fused_v2_vec16_prefetch",
    .role = Role::fused,
    .description = "v1 + the next row's x and dy loaded during this row's reductions (rows <= 512 vectors)",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { rr::launch<T>(a, pick_kernel<T>(a), kLayerNormEps); }),
    .refuse =
        [](const Shape& s, DType dtype) -> std::optional<std::string> {
          const auto plan = row_plan(RowsCols::of(s).cols, dtype_size(dtype), kRowThreads);
          if (!plan || plan->vectors_per_thread > 2)
            return "rows over 512 16-byte vectors do not fit two rows in registers; use fused_v1_vec16_partials";
          return std::nullopt;
        },
    .workspace_bytes = [](const Shape& s, DType) { return rr::workspace_bytes(RowsCols::of(s)); },
    .prepare = [](const LaunchArgs& a) {
      return rr::prepare(a, []<class T>(const LaunchArgs& a) { return pick_kernel<T>(a); });
    },
});

}  // namespace
}  // namespace kwb
