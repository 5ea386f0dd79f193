// layernorm_fwd fused_v1_vec16_two_pass: one block per row, the row held in registers as 16-byte
// vectors, mean and variance in two passes over the registers, one write of y.
//
// Why it should be fast: x is read from DRAM once and y written once (weight and bias, 2 * cols
// elements, stay in L2 across rows); the eager chain makes 11 trips through memory with fp32
// intermediates. Napkin math at 16384 x 4096 bf16: 2 * 128 MiB + 16 KiB = 268 MB; at the H100's
// ~3030 GB/s copy ceiling that is ~89 us. The row split (scalar head, 16-byte body, scalar tail;
// kernels/common/row_in_registers.cuh) keeps the 16-byte accesses at any cols (4100, 5124), and
// long rows get more threads at 4 vectors each so that enough loads are in flight per SM.
// Expected: >= 90% of the copy ceiling at large bf16 shapes (rmsnorm's v3 is the same structure
// with one block reduction fewer), so above F.layer_norm. Measured: docs/results.md.
//
// Numerics: the variance is the mean of squared deviations from the row mean, computed from the
// registers after the mean is known (two passes over data already on chip, so it costs two block
// reductions and no memory traffic). The one-pass E[x^2] - E[x]^2 cancels catastrophically when
// |mean| >> std (in fp32, a row of mean 100 and std 1 keeps about 3 digits of its variance);
// the two-pass form has no such cancellation.
//
// Rows over 4096 vectors (bf16 > 32768 cols, fp32 > 16384) do not fit in registers at 1024
// threads: they take a plain three-pass kernel that rereads the row (from L2 where it stays),
// correct at any length but not tuned.
#include <climits>
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/block_reduce.cuh"
#include "kernels/common/row_in_registers.cuh"
#include "kernels/common/vector_pack.cuh"
#include "reference/layernorm.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

constexpr int kMaxThreads = 1024;

// VPT: 16-byte vectors per thread, a compile-time count so the row stays in registers.
template <class T, int VPT>
__global__ void __launch_bounds__(kMaxThreads)
layernorm_fwd_v1(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b, T* __restrict__ y,
                 int cols, float eps) {
  constexpr int E = RowSplit<T>::E;
  using P = Pack<T, E>;
  __shared__ float scratch[32];
  const T* xr = x + static_cast<std::int64_t>(blockIdx.x) * cols;
  T* yr = y + static_cast<std::int64_t>(blockIdx.x) * cols;
  const RowSplit<T> split(xr, cols);
  const P* xb = reinterpret_cast<const P*>(xr + split.head);
  P* yb = reinterpret_cast<P*>(yr + split.head);

  P row[VPT];  // (VPT, E): this thread's body vectors
  const bool has_edge = threadIdx.x < split.edge_count;
  const int edge_col = split.edge_col(threadIdx.x);
  float edge = 0;  // this thread's head or tail element
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const int idx = threadIdx.x + i * blockDim.x;
    if (idx < split.nvec) load_vector16(row[i], xb + idx);
  }
  if (has_edge) edge = to_float(xr[edge_col]);

  // Pass 1: the mean.
  float sum = edge;
#pragma unroll
  for (int i = 0; i < VPT; ++i)
    if (threadIdx.x + i * blockDim.x < split.nvec) {
#pragma unroll
      for (int e = 0; e < E; ++e) sum += to_float(row[i].v[e]);
    }
  const float mean = block_sum(sum, scratch) / static_cast<float>(cols);

  // Pass 2: the variance, from the deviations of the same registers.
  float sum_sq = 0;
  if (has_edge) sum_sq = (edge - mean) * (edge - mean);
#pragma unroll
  for (int i = 0; i < VPT; ++i)
    if (threadIdx.x + i * blockDim.x < split.nvec) {
#pragma unroll
      for (int e = 0; e < E; ++e) {
        const float d = to_float(row[i].v[e]) - mean;
        sum_sq += d * d;
      }
    }
  const float rstd = rsqrtf(block_sum(sum_sq, scratch) / static_cast<float>(cols) + eps);

  if (has_edge) yr[edge_col] = from_float<T>((edge - mean) * rstd * to_float(w[edge_col]) + to_float(b[edge_col]));
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const int idx = threadIdx.x + i * blockDim.x;
    if (idx < split.nvec) {
      const int col = split.head + idx * E;
      const P wp = load_pack_aligned<T, E>(w + col, split.vec_align);
      const P bp = load_pack_aligned<T, E>(b + col, split.vec_align);
      P out;
#pragma unroll
      for (int e = 0; e < E; ++e)
        out.v[e] = from_float<T>((to_float(row[i].v[e]) - mean) * rstd * to_float(wp.v[e]) + to_float(bp.v[e]));
      store_vector16(yb + idx, out);
    }
  }
}

// Rows too long for registers: three strided passes over the row (sum, squared deviations,
// write), the second and third reading it again.
template <class T>
__global__ void __launch_bounds__(kMaxThreads)
layernorm_fwd_long_rows(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                        T* __restrict__ y, int cols, float eps) {
  __shared__ float scratch[32];
  const T* xr = x + static_cast<std::int64_t>(blockIdx.x) * cols;
  T* yr = y + static_cast<std::int64_t>(blockIdx.x) * cols;
  float sum = 0;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += to_float(xr[c]);
  const float mean = block_sum(sum, scratch) / static_cast<float>(cols);
  float sum_sq = 0;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float d = to_float(xr[c]) - mean;
    sum_sq += d * d;
  }
  const float rstd = rsqrtf(block_sum(sum_sq, scratch) / static_cast<float>(cols) + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    yr[c] = from_float<T>((to_float(xr[c]) - mean) * rstd * to_float(w[c]) + to_float(b[c]));
}

template <class T>
void launch(const LaunchArgs& a) {
  const auto [rows, cols] = RowsCols::of(a.shape);
  const auto grid = static_cast<unsigned>(rows);
  const auto eps = static_cast<float>(kLayerNormEps);
  const T* x = a.tensor<const T>("x");
  const T* w = a.tensor<const T>("weight");
  const T* b = a.tensor<const T>("bias");
  T* y = a.tensor<T>("y");
  const auto plan = row_plan(cols, sizeof(T), kMaxThreads);
  if (!plan) {
    layernorm_fwd_long_rows<T><<<grid, kMaxThreads, 0, a.stream>>>(x, w, b, y, static_cast<int>(cols), eps);
    return;
  }
  auto go = [&](auto vpt_tag) {
    constexpr int VPT = decltype(vpt_tag)::value;
    layernorm_fwd_v1<T, VPT><<<grid, plan->threads, 0, a.stream>>>(x, w, b, y, static_cast<int>(cols), eps);
  };
  switch (plan->vectors_per_thread) {  // row_plan gives 1, 2 or 4
    case 1: go(std::integral_constant<int, 1>{}); break;
    case 2: go(std::integral_constant<int, 2>{}); break;
    default: go(std::integral_constant<int, 4>{}); break;
  }
}

KWB_REGISTER_VARIANT(Variant{
    .op = "layernorm_fwd",
    .name = "fused_v1_vec16_two_pass",
    .role = Role::fused,
    .description = "row in registers as 16-byte vectors at any cols, two-pass mean/variance on chip, one write",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse =
        [](const Shape& s, DType) -> std::optional<std::string> {
          const auto [rows, cols] = RowsCols::of(s);
          if (auto why = refuse_rows_beyond_grid(rows)) return why;
          if (cols > INT_MAX) return "cols above 2^31-1 exceed the kernel's 32-bit column index";
          return std::nullopt;
        },
});

}  // namespace
}  // namespace kwb
