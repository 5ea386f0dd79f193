// softmax_fwd fused_v2_online_two_pass: one block per row of any length; x read twice.
//
// For rows that do not fit on chip. Pass 1 streams the row once and keeps each thread's online
// (max, sum) state: per group of loaded vectors, the new max, one rescale of the running sum
// by exp(old max - new max), and one exp per element. One block reduction combines the states
// (kernels/softmax_fwd/online_softmax.cuh). Pass 2 re-reads x and writes y = exp(x - max) / sum.
// Loads come four 16-byte vectors per thread at a time (64 bytes in flight per thread, 32 KiB
// per 512-thread block), scalar head and tail at any cols.
//
// What it reaches: three streams (read, read again, write) against the copy's two, so if the
// re-read comes from DRAM it is capped at 2/3 = 67% of copy. The re-read can come from L2: at
// 512 threads about 2 blocks (rows) per SM are in flight, 264 rows on an H100, so rows up to
// ~50 MiB / 264 / 2 (x and y lines share the L2) ~ 96 KiB (48K bf16, 24K fp32 elements) are
// still in L2 when pass 2 starts, and the kernel approaches the copy ceiling there. Pass 2
// walks the row backwards, so for longer rows the part read last in pass 1 (the most likely
// to still be cached) is read first: at 256K bf16 (512 KiB rows) ~20% of the re-read hits,
// which puts the estimate at ~70% of copy. The `block` tunable trades memory parallelism for
// a smaller working set (256 threads: more rows in flight, 1024: fewer).
// Expected: 85-95% of copy up to ~32K columns (below fused_v1 where v1 applies), 65-75% at
// 128K-256K columns, where fused_v3_cluster_split_row is the fast variant.
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/vector_pack.cuh"
#include "kernels/softmax_fwd/online_softmax.cuh"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

constexpr int kUnroll = 4;  // 16-byte vectors per thread in flight

template <class T>
__global__ void __launch_bounds__(1024) softmax_fwd_v2(const T* __restrict__ x, T* __restrict__ y, int cols) {
  constexpr int E = RowSplit<T>::E;
  using P = Pack<T, E>;
  __shared__ MaxSum scratch[32];
  const std::int64_t offset = static_cast<std::int64_t>(blockIdx.x) * cols;
  const T* xr = x + offset;
  T* yr = y + offset;
  const RowSplit<T> split = split_row(xr, cols);
  const P* xb = reinterpret_cast<const P*>(xr + split.head);
  P* yb = reinterpret_cast<P*>(yr + split.head);
  const int threads = static_cast<int>(blockDim.x);

  // Pass 1: forward over the row, kUnroll vectors per thread per step.
  MaxSum state = empty_max_sum();
  for (int first = threadIdx.x; first < split.nvec; first += kUnroll * threads) {
    P v[kUnroll];  // (kUnroll, E)
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (first + u * threads < split.nvec) v[u] = xb[first + u * threads];
    float max = state.max;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (first + u * threads < split.nvec) {
#pragma unroll
        for (int e = 0; e < E; ++e) max = fmaxf(max, to_float(v[u].v[e]));
      }
    float sum = state.sum > 0.0f ? state.sum * exp_shifted(state.max, max) : 0.0f;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (first + u * threads < split.nvec) {
#pragma unroll
        for (int e = 0; e < E; ++e) sum += exp_shifted(to_float(v[u].v[e]), max);
      }
    state = {max, sum};
  }
  const bool has_edge = static_cast<int>(threadIdx.x) < split.edge_count();
  const int edge_col = split.edge_col(threadIdx.x);
  const float edge = has_edge ? to_float(xr[edge_col]) : 0.0f;
  if (has_edge) state = combine(state, {edge, 1.0f});  // one element: exp(edge - edge) = 1
  const MaxSum total = block_combine(state, scratch);
  const float inv_sum = 1.0f / total.sum;

  // Pass 2: backwards from the row's end, the part pass 1 read last.
  if (has_edge) yr[edge_col] = from_float<T>(exp_shifted(edge, total.max) * inv_sum);
  for (int last = split.nvec - 1 - static_cast<int>(threadIdx.x); last >= 0; last -= kUnroll * threads) {
    P v[kUnroll];  // (kUnroll, E)
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (last - u * threads >= 0) v[u] = xb[last - u * threads];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (last - u * threads >= 0) {
        P out;
#pragma unroll
        for (int e = 0; e < E; ++e) out.v[e] = from_float<T>(exp_shifted(to_float(v[u].v[e]), total.max) * inv_sum);
        yb[last - u * threads] = out;
      }
  }
}

template <class T>
void launch(const LaunchArgs& a) {
  const RowsCols shape = RowsCols::of(a.shape);
  const auto rows = static_cast<unsigned>(shape.rows);
  const auto cols = static_cast<int>(shape.cols);
  const auto threads = static_cast<unsigned>(a.tunable("block"));
  softmax_fwd_v2<T><<<rows, threads, 0, a.stream>>>(a.tensor<const T>("x"),
                                                     a.tensor<T>("y"), cols);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "softmax_fwd",
    .name = "fused_v2_online_two_pass",
    .role = Role::fused,
    .description = "one block per row of any length: online (max, sum) pass, then a backward re-read (L2) and write",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse =
        [](const Shape& s, DType) -> std::optional<std::string> {
          const auto [rows, cols] = RowsCols::of(s);
          if (auto why = refuse_rows_beyond_grid(rows)) return why;
          return refuse_cols_beyond_int(cols);
        },
    .tunables = {{"block", {512, 256, 1024}, "threads per block (one row per block)"}},
});

}  // namespace
}  // namespace kwb
