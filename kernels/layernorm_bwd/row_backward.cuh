// The per-row math of the layernorm_bwd kernels that hold a row in registers (fused_v1 and
// fused_v2, one row per block, which differ only in when they load the row; fused_v3, a row per
// group of threads, several groups per block): from x and dy (VPT 16-byte vectors per thread,
// plus the thread's edge column), the mean, then the variance, sum(g) and sum(g * (x - mean)) in
// one sum of three (g = weight * dy), dx written once, and the row's dy * xhat and dy added to
// the thread's column sums. Inlined; the code comes out a little different from a copy per
// kernel. Re-timed on an H100 against the separate copies: fused_v1/v2 within noise, fused_v3 a
// little slower, kept shared because fused_v4 and fused_v5 outrun v3 at every shape it runs.
// Measured: docs/results.md.
#pragma once

#include <cstdint>

#include "harness/catalogue/device_types.cuh"
#include "kernels/common/block_reduce.cuh"
#include "kernels/common/row_in_registers.cuh"
#include "kernels/common/vector_pack.cuh"

namespace kwb {

// Where a thread stands in the threads that share a row: vector i of the thread is t + i * stride
// of the row's body; row_sums(float (&)[N]) sums N floats over those threads (every one gets the
// totals; called by every thread of the block, N = 1 then 3); write: false for a group whose row
// is past the end (it still takes part in the sums, stores nothing and adds nothing).
struct RowThreads {
  int t;
  int stride;
  bool write;
};

// The whole block on one row (fused_v1, fused_v2).
__device__ __forceinline__ RowThreads whole_block() { return {static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x), true}; }

template <class T, int VPT, int E = RowSplit<T>::E, class RowSums>
__device__ __forceinline__ void layernorm_row_backward(const Pack<T, E> (&xv)[VPT], const Pack<T, E> (&dyv)[VPT],
                                                       float x_edge, float dy_edge, bool has_edge, int edge_col,
                                                       const RowSplit<T>& split, const T* __restrict__ w,
                                                       T* __restrict__ dx_row, float inv_cols, float eps,
                                                       RowThreads me, RowSums&& row_sums, float (&dw)[VPT][E],
                                                       float (&db)[VPT][E], float& dw_edge, float& db_edge) {
  using P = Pack<T, E>;
  P* dxb = reinterpret_cast<P*>(dx_row + split.head);
  // The mean, then the variance, sum(g) and sum(g * (x - mean)) in one sum of three.
  float sum[1] = {has_edge ? x_edge : 0.0f};
#pragma unroll
  for (int i = 0; i < VPT; ++i)
    if (me.t + i * me.stride < split.nvec) {
#pragma unroll
      for (int e = 0; e < E; ++e) sum[0] += to_float(xv[i].v[e]);
    }
  row_sums(sum);
  const float mean = sum[0] * inv_cols;

  float sums[3] = {0, 0, 0};  // (x - mean)^2, g, g * (x - mean)
  if (has_edge) {
    const float d = x_edge - mean, g = to_float(w[edge_col]) * dy_edge;
    sums[0] = d * d;
    sums[1] = g;
    sums[2] = g * d;
  }
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const int idx = me.t + i * me.stride;
    if (idx < split.nvec) {
      const P wp = load_pack_aligned<T, E>(w + split.head + idx * E, split.vec_align);
#pragma unroll
      for (int e = 0; e < E; ++e) {
        const float d = to_float(xv[i].v[e]) - mean, g = to_float(wp.v[e]) * to_float(dyv[i].v[e]);
        sums[0] += d * d;
        sums[1] += g;
        sums[2] += g * d;
      }
    }
  }
  row_sums(sums);
  const float rstd = rsqrtf(sums[0] * inv_cols + eps);
  const float mean_g = sums[1] * inv_cols;
  const float mean_g_xhat = sums[2] * inv_cols * rstd;

  // dx, and this row's share of dweight and dbias.
  if (!me.write) return;
  if (has_edge) {
    const float xhat = (x_edge - mean) * rstd, g = to_float(w[edge_col]) * dy_edge;
    dx_row[edge_col] = from_float<T>(rstd * (g - mean_g - xhat * mean_g_xhat));
    dw_edge += dy_edge * xhat;
    db_edge += dy_edge;
  }
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const int idx = me.t + i * me.stride;
    if (idx < split.nvec) {
      const P wp = load_pack_aligned<T, E>(w + split.head + idx * E, split.vec_align);  // an L1 hit
      P out;
#pragma unroll
      for (int e = 0; e < E; ++e) {
        const float xhat = (to_float(xv[i].v[e]) - mean) * rstd, d_y = to_float(dyv[i].v[e]);
        const float g = to_float(wp.v[e]) * d_y;
        out.v[e] = from_float<T>(rstd * (g - mean_g - xhat * mean_g_xhat));
        dw[i][e] += d_y * xhat;
        db[i][e] += d_y;
      }
      store_vector16(dxb + idx, out);
    }
  }
}

}  // namespace kwb
