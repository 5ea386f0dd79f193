// softmax_fwd baseline_eager_7_launches: softmax as an eager framework runs it when it is
// written out op by op (PyTorch's own torch.softmax is one fused kernel; the peers in
// TARGETS.md measure that one):
//
//   xf = x.float()                       # cast                (not in fp32)
//   m  = xf.amax(dim=-1, keepdim=True)   # row reduction
//   z  = xf - m                          # broadcast subtract
//   e  = z.exp()                         # elementwise
//   s  = e.sum(dim=-1, keepdim=True)     # row reduction
//   p  = e / s                           # broadcast divide
//   y  = p.to(x.dtype)                   # cast                (not in fp32)
//
// Seven launches in fp16/bf16, five in fp32, each a full trip through memory with fp32
// intermediates (xf, z, e, p: 4 x 4 bytes per element in the workspace). Bytes per element in
// bf16: cast 2+4, amax 4, sub 4+4, exp 4+4, sum 4, div 4+4, cast 4+2 = 44, against the fused
// kernels' 2+2: expect ~11x slower at equal bandwidth (fp32: 32 against 8, ~4x).
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/block_reduce.cuh"
#include "kernels/common/eager_ops.cuh"
#include "reference/rows_cols_op.hpp"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<cast_x_to_f32>, ...).
namespace step {
struct cast_x_to_f32;
struct minus_max;
struct exp;
struct sum_over_cols;
struct divide_by_sum;
struct cast_y_to_dtype;
}  // namespace step

namespace {

// out[r] = max_c in[r * cols + c]: one block per row, as a framework's last-dim amax.
__global__ void row_max_kernel(const float* in, float* out, std::int64_t cols) {
  __shared__ float scratch[32];
  const float* row = in + static_cast<std::int64_t>(blockIdx.x) * cols;
  float m = -INFINITY;
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
  m = warp_max(m);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) scratch[warp] = m;
  __syncthreads();
  if (warp == 0) {
    m = lane < static_cast<int>(blockDim.x >> 5) ? scratch[lane] : -INFINITY;
    m = warp_max(m);
    if (lane == 0) out[blockIdx.x] = m;
  }
}

struct Workspace {
  float *xf, *z, *e, *p, *max, *sum;
};

Workspace carve(void* base, std::int64_t rows, std::int64_t cols) {
  auto* f = static_cast<float*>(base);
  const std::int64_t n = rows * cols;
  Workspace w;
  w.xf = f;
  w.z = w.xf + n;
  w.e = w.z + n;
  w.p = w.e + n;
  w.max = w.p + n;
  w.sum = w.max + rows;
  return w;
}

std::size_t workspace_bytes(const Shape& s, DType) {
  const auto [rows, cols] = RowsCols::of(s);
  return (4 * rows * cols + 2 * rows) * sizeof(float);
}

// A template function rather than a generic lambda: nvcc allows no extended __device__ lambda
// inside a generic lambda.
template <class T>
void launch_typed(const LaunchArgs& a) {
  constexpr bool is_fp32 = std::is_same_v<T, float>;
  const RowsCols shape = RowsCols::of(a.shape);  // named, not bound: the device lambdas capture cols
  const std::int64_t rows = shape.rows, cols = shape.cols, n = rows * cols;
  const Workspace ws = carve(a.workspace, rows, cols);
  const T* x = a.tensor<const T>("x");
  T* y = a.tensor<T>("y");
  const float* xf = reinterpret_cast<const float*>(x);
  if constexpr (!is_fp32) {
    float* out = ws.xf;
    eager_map<step::cast_x_to_f32>(n, a.stream, [=] __device__(std::int64_t i) { out[i] = to_float(x[i]); });
    xf = ws.xf;
  }
  row_max_kernel<<<static_cast<unsigned>(rows), kEagerThreads, 0, a.stream>>>(xf, ws.max, cols);
  const float* max = ws.max;
  float* z = ws.z;
  eager_map<step::minus_max>(n, a.stream, [=] __device__(std::int64_t i) { z[i] = xf[i] - max[i / cols]; });
  float* e = ws.e;
  eager_map<step::exp>(n, a.stream, [=] __device__(std::int64_t i) { e[i] = expf(z[i]); });
  eager_row_sum<step::sum_over_cols>(e, ws.sum, rows, cols, a.stream);
  const float* sum = ws.sum;
  // In fp32 the divide writes y itself (the final cast is a no-op PyTorch skips).
  float* p = is_fp32 ? reinterpret_cast<float*>(y) : ws.p;
  eager_map<step::divide_by_sum>(n, a.stream, [=] __device__(std::int64_t i) { p[i] = e[i] / sum[i / cols]; });
  if constexpr (!is_fp32) {
    const float* pp = ws.p;
    eager_map<step::cast_y_to_dtype>(n, a.stream, [=] __device__(std::int64_t i) { y[i] = from_float<T>(pp[i]); });
  }
}

KWB_REGISTER_VARIANT(Variant{
    .op = "softmax_fwd",
    .name = "baseline_eager_7_launches",
    .role = Role::baseline,
    .description = "op by op as eager PyTorch written out: cast, amax, sub, exp, sum, div, cast",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse =
        [](const Shape& s, DType) -> std::optional<std::string> {
          if (RowsCols::of(s).rows > 2147483647) return "rows above 2^31-1 exceed the grid's x dimension";
          return std::nullopt;
        },
    .workspace_bytes = workspace_bytes,
});

}  // namespace
}  // namespace kwb
