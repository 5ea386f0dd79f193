// rmsnorm_fwd baseline_eager_8_launches: RMSNorm as an eager framework runs it, op by op.
//
//   xf = x.float(); sq = xf.pow(2); ms = sq.mean(-1); ms = ms + eps; r = rsqrt(ms);
//   t = xf * r; t = t.to(dtype); y = t * weight
//
// Eight launches for fp16/bf16 (six for fp32, where both casts are no-ops), each a full pass
// through device memory with fp32 intermediates: this is what the fused kernels are quoted
// against. Elementwise kernels are plain grid-stride loops, as a framework's generic ones are.
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/block_reduce.cuh"
#include "reference/rmsnorm.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

constexpr int kThreads = 256;

unsigned grid_for(std::int64_t n) {
  return static_cast<unsigned>(std::min<std::int64_t>((n + kThreads - 1) / kThreads, 65535 * 8));
}

template <class In, class Out>
__global__ void cast_kernel(const In* in, Out* out, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    out[i] = from_float<Out>(to_float<In>(in[i]));
}

__global__ void square_kernel(const float* in, float* out, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    out[i] = in[i] * in[i];
}

__global__ void row_mean_kernel(const float* in, float* out, std::int64_t cols) {
  __shared__ float scratch[32];
  const float* row = in + blockIdx.x * cols;
  float sum = 0;
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += row[c];
  sum = block_sum(sum, scratch);
  if (threadIdx.x == 0) out[blockIdx.x] = sum / static_cast<float>(cols);
}

__global__ void add_scalar_kernel(const float* in, float* out, float value, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    out[i] = in[i] + value;
}

__global__ void rsqrt_kernel(const float* in, float* out, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    out[i] = rsqrtf(in[i]);
}

// t[r, c] = x[r, c] * s[r]: the broadcast multiply by the per-row scale.
__global__ void scale_rows_kernel(const float* x, const float* s, float* out, std::int64_t rows,
                                  std::int64_t cols) {
  const std::int64_t n = rows * cols;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    out[i] = x[i] * s[i / cols];
}

// y[r, c] = t[r, c] * w[c], in the storage dtype as the framework's multiply does.
template <class T>
__global__ void mul_weight_kernel(const T* t, const T* w, T* y, std::int64_t rows, std::int64_t cols) {
  const std::int64_t n = rows * cols;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    y[i] = from_float<T>(to_float<T>(t[i]) * to_float<T>(w[i % cols]));
}

struct Workspace {
  float *xf, *sq, *mean, *mean_eps, *inv_rms, *scaled;
  void* scaled_cast;
};

Workspace carve(void* base, std::int64_t rows, std::int64_t cols) {
  auto* p = static_cast<float*>(base);
  const std::int64_t n = rows * cols;
  Workspace w;
  w.xf = p;
  w.sq = w.xf + n;
  w.scaled = w.sq + n;
  w.mean = w.scaled + n;
  w.mean_eps = w.mean + rows;
  w.inv_rms = w.mean_eps + rows;
  w.scaled_cast = w.inv_rms + rows;
  return w;
}

std::size_t workspace_bytes(const Shape& s, DType dtype) {
  const auto [rows, cols] = RowsCols::of(s);
  return 3 * rows * cols * 4 + 3 * rows * 4 + rows * cols * dtype_size(dtype);
}

template <class T>
void launch(const LaunchArgs& a) {
  const auto [rows, cols] = RowsCols::of(a.shape);
  const std::int64_t n = rows * cols;
  const Workspace ws = carve(a.workspace, rows, cols);
  constexpr bool is_fp32 = std::is_same_v<T, float>;
  const T* x = a.tensor<const T>("x");
  const T* w = a.tensor<const T>("weight");
  T* y = a.tensor<T>("y");
  const float* xf = reinterpret_cast<const float*>(x);
  if constexpr (!is_fp32) {
    cast_kernel<T, float><<<grid_for(n), kThreads, 0, a.stream>>>(x, ws.xf, n);
    xf = ws.xf;
  }
  square_kernel<<<grid_for(n), kThreads, 0, a.stream>>>(xf, ws.sq, n);
  row_mean_kernel<<<static_cast<unsigned>(rows), kThreads, 0, a.stream>>>(ws.sq, ws.mean, cols);
  add_scalar_kernel<<<grid_for(rows), kThreads, 0, a.stream>>>(ws.mean, ws.mean_eps,
                                                               static_cast<float>(kRmsNormEps), rows);
  rsqrt_kernel<<<grid_for(rows), kThreads, 0, a.stream>>>(ws.mean_eps, ws.inv_rms, rows);
  scale_rows_kernel<<<grid_for(n), kThreads, 0, a.stream>>>(xf, ws.inv_rms, ws.scaled, rows, cols);
  const T* t = reinterpret_cast<const T*>(ws.scaled);
  if constexpr (!is_fp32) {
    cast_kernel<float, T><<<grid_for(n), kThreads, 0, a.stream>>>(ws.scaled, static_cast<T*>(ws.scaled_cast), n);
    t = static_cast<const T*>(ws.scaled_cast);
  }
  mul_weight_kernel<T><<<grid_for(n), kThreads, 0, a.stream>>>(t, w, y, rows, cols);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "rmsnorm_fwd",
    .name = "baseline_eager_8_launches",
    .role = Role::baseline,
    .description = "op by op as eager PyTorch: cast, square, mean, +eps, rsqrt, scale, cast, *weight",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = {},
    .workspace_bytes = workspace_bytes,
});

}  // namespace
}  // namespace kwb
