// layernorm_fwd baseline_eager_11_launches: LayerNorm as an eager framework runs the unfused
// formula, op by op (each line one launch, kernels/common/eager_ops.cuh):
//
//   xf = x.float()                               # 1  cast
//   mean = xf.mean(-1, keepdim=True)             # 2  row reduction
//   xc = xf - mean                               # 3
//   sq = xc.pow(2)                               # 4
//   var = sq.mean(-1, keepdim=True)              # 5  row reduction
//   ve = var + eps                               # 6  (rows elements)
//   rstd = torch.rsqrt(ve)                       # 7  (rows elements)
//   xh = xc * rstd                               # 8
//   t = xh.to(dtype)                             # 9  cast
//   tw = t * weight                              # 10 (in dtype)
//   y = tw + bias                                # 11 (in dtype)
//
// Eleven launches for fp16/bf16, nine for fp32 (both casts are no-ops there), each a full pass
// through memory with fp32 intermediates: what the fused kernel's speedup is quoted against.
// Intermediates that are dead share buffers (memory only: launches and traffic are unchanged).
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/eager_ops.cuh"
#include "reference/layernorm.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<cast_x_to_f32>, ...).
namespace step {
struct cast_x_to_f32;
struct mean_over_cols;
struct minus_mean;
struct square;
struct var_over_cols;
struct plus_eps;
struct rsqrt;
struct times_rstd;
struct cast_xhat_to_dtype;
struct times_weight;
struct plus_bias;
}  // namespace step

namespace {

// Two fp32 buffers of rows x cols, four of rows, then two dtype buffers of rows x cols.
std::size_t workspace_bytes(const Shape& s, DType dtype) {
  const auto [rows, cols] = RowsCols::of(s);
  return 2 * rows * cols * 4 + 4 * rows * 4 + 2 * rows * cols * dtype_size(dtype);
}

template <class T>
void launch_typed(const LaunchArgs& a) {
  constexpr bool is_fp32 = std::is_same_v<T, float>;
  const RowsCols shape = RowsCols::of(a.shape);  // named, not bound: the device lambdas capture rows and cols
  const std::int64_t rows = shape.rows, cols = shape.cols, n = rows * cols;
  const T* x = a.tensor<const T>("x");
  const T* w = a.tensor<const T>("weight");
  const T* b = a.tensor<const T>("bias");
  T* y = a.tensor<T>("y");
  float* buf_a = static_cast<float*>(a.workspace);  // xf, then sq, then xh
  float* buf_b = buf_a + n;                          // xc
  float* mean = buf_b + n;
  float* var = mean + rows;
  float* ve = var + rows;
  float* rstd = ve + rows;
  T* t_buf = reinterpret_cast<T*>(rstd + rows);
  T* tw = t_buf + n;
  const float inv_cols = 1.0f / static_cast<float>(cols), eps = static_cast<float>(kLayerNormEps);
  cudaStream_t s = a.stream;

  const float* xf = reinterpret_cast<const float*>(x);
  if constexpr (!is_fp32) {
    float* out = buf_a;
    eager_map<step::cast_x_to_f32>(n, s, [=] __device__(std::int64_t i) { out[i] = to_float(x[i]); });
    xf = buf_a;
  }
  eager_row_sum<step::mean_over_cols>(xf, mean, rows, cols, s, inv_cols);
  float* xc = buf_b;
  eager_map<step::minus_mean>(n, s, [=] __device__(std::int64_t i) { xc[i] = xf[i] - mean[i / cols]; });
  float* sq = buf_a;
  eager_map<step::square>(n, s, [=] __device__(std::int64_t i) { sq[i] = xc[i] * xc[i]; });
  eager_row_sum<step::var_over_cols>(sq, var, rows, cols, s, inv_cols);
  eager_map<step::plus_eps>(rows, s, [=] __device__(std::int64_t i) { ve[i] = var[i] + eps; });
  eager_map<step::rsqrt>(rows, s, [=] __device__(std::int64_t i) { rstd[i] = rsqrtf(ve[i]); });
  float* xh = buf_a;
  eager_map<step::times_rstd>(n, s, [=] __device__(std::int64_t i) { xh[i] = xc[i] * rstd[i / cols]; });
  const T* t = reinterpret_cast<const T*>(xh);
  if constexpr (!is_fp32) {
    T* out = t_buf;
    eager_map<step::cast_xhat_to_dtype>(n, s, [=] __device__(std::int64_t i) { out[i] = from_float<T>(xh[i]); });
    t = t_buf;
  }
  eager_map<step::times_weight>(n, s, [=] __device__(std::int64_t i) { tw[i] = from_float<T>(to_float(t[i]) * to_float(w[i % cols])); });
  eager_map<step::plus_bias>(n, s, [=] __device__(std::int64_t i) { y[i] = from_float<T>(to_float(tw[i]) + to_float(b[i % cols])); });
}

KWB_REGISTER_VARIANT(Variant{
    .op = "layernorm_fwd",
    .name = "baseline_eager_11_launches",
    .role = Role::baseline,
    .description = "op by op as eager PyTorch: cast, mean, sub, pow, mean, +eps, rsqrt, mul, cast, *weight, +bias",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = {},
    .workspace_bytes = workspace_bytes,
});

}  // namespace
}  // namespace kwb
