// layernorm_bwd baseline_eager_31_launches: the unfused LayerNorm's statistics recomputed op by op,
// then the autograd graph of its ops run node by node, each framework op one launch
// (kernels/common/eager_ops.cuh). The affine part runs in fp32 as under mixed precision
// (y = (xh * weight.float() + bias.float()).to(dtype)), since dweight and dbias are fp32 outputs:
// rounding xhat to bf16 before the weight gradient would put a 2^-9 relative error on each of
// the rows' terms.
//
//   xf = x.float()                                  # 1  cast
//   mean = xf.mean(-1, keepdim=True)                # 2  row reduction
//   xc = xf - mean                                  # 3
//   sq = xc.pow(2)                                  # 4
//   var = sq.mean(-1, keepdim=True)                 # 5  row reduction
//   ve = var + eps; rstd = torch.rsqrt(ve)          # 6, 7   (rows elements)
//   xh = xc * rstd                                  # 8
//   wf = weight.float()                             # 9  cast (cols elements)
//   # autograd of y = (xh * wf + bias.float()).to(dtype), given dy:
//   dyf = dy.float()                                # 10 cast
//   dbias = dyf.sum(0)                              # 11, 12 column sum (partials, then their sum)
//   dweight = (dyf * xh).sum(0)                     # 13 mul; 14, 15 column sum
//   dxh = dyf * wf                                  # 16
//   # xh = xc * rstd
//   dxc1 = dxh * rstd                               # 17
//   drstd = (dxh * xc).sum(-1, keepdim=True)        # 18 mul; 19 row reduction
//   # rstd = rsqrt(ve): -0.5 * drstd * rstd^3
//   dvar = drstd * rstd.pow(3) * -0.5               # 20 pow, 21 mul, 22 mul  (rows elements)
//   # var = sq.mean(-1): expand / cols; sq = xc.pow(2): * 2 * xc
//   dsq = dvar.expand(rows, cols) / cols            # 23
//   dxc2 = dsq * (xc * 2)                           # 24 mul, 25 mul
//   dxc = dxc1 + dxc2                               # 26 autograd accumulates both paths into xc
//   # xc = xf - mean: dxf = dxc, dmean = -dxc.sum(-1); mean = xf.mean(-1): expand / cols
//   dmean = -dxc.sum(-1, keepdim=True)              # 27 row reduction, 28 neg (rows elements)
//   dxf = dxc + dmean.expand(rows, cols) / cols     # 29 div, 30 add
//   dx = dxf.to(dtype)                              # 31 cast
//
// 31 launches for fp16/bf16, 27 for fp32 (the casts 1, 9, 10 and 31 are no-ops there). Dead
// intermediates share five rows x cols fp32 buffers (memory only: launches and traffic are the
// same).
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
struct cast_weight_to_f32;
struct cast_dy_to_f32;
struct dbias_sum_over_rows;
struct dy_times_xhat;
struct dweight_sum_over_rows;
struct dy_times_weight;
struct dxhat_times_rstd;
struct dxhat_times_xc;
struct drstd_sum_over_cols;
struct rstd_cubed;
struct drstd_times_rstd_cubed;
struct times_minus_half;
struct dvar_expand_div_cols;
struct xc_times_2;
struct dsq_times_2xc;
struct add_dxc_paths;
struct dxc_sum_over_cols;
struct negate;
struct dmean_expand_div_cols;
struct add_dmean_term;
struct cast_dx_to_dtype;
}  // namespace step

namespace {

constexpr int kFullBuffers = 5;  // rows x cols fp32 each
constexpr int kRowVectors = 10;  // mean, var, ve, rstd, drstd, r3, t1, dvar, s, dmean

std::size_t workspace_bytes(const Shape& s, DType) {
  const auto [rows, cols] = RowsCols::of(s);
  const auto parts = static_cast<std::size_t>(eager_col_sum_parts(rows));
  return (kFullBuffers * rows * cols + kRowVectors * rows + cols + parts * cols) * sizeof(float);
}

template <class T>
void launch_typed(const LaunchArgs& a) {
  constexpr bool is_fp32 = std::is_same_v<T, float>;
  const RowsCols shape = RowsCols::of(a.shape);  // named, not bound: the device lambdas capture rows and cols
  const std::int64_t rows = shape.rows, cols = shape.cols, n = rows * cols;
  const T* x = a.tensor<const T>("x");
  const T* w = a.tensor<const T>("weight");
  const T* dy = a.tensor<const T>("dy");
  T* dx = a.tensor<T>("dx");
  float* dweight = a.tensor<float>("dweight");
  float* dbias = a.tensor<float>("dbias");

  // Buffers A..E (rows x cols), reused as the graph frees them; then row vectors, wf, partials.
  float* A = static_cast<float*>(a.workspace);
  float* B = A + n;
  float* C = B + n;
  float* D = C + n;
  float* E = D + n;
  float* mean = E + n;
  float* var = mean + rows;
  float* ve = var + rows;
  float* rstd = ve + rows;
  float* drstd = rstd + rows;
  float* r3 = drstd + rows;
  float* t1 = r3 + rows;
  float* dvar = t1 + rows;
  float* row_s = dvar + rows;
  float* dmean = row_s + rows;
  float* wf_buf = dmean + rows;
  float* partials = wf_buf + cols;
  const float inv_cols = 1.0f / static_cast<float>(cols), eps = static_cast<float>(kLayerNormEps);
  cudaStream_t s = a.stream;

  // Recompute the statistics.
  const float* xf = reinterpret_cast<const float*>(x);
  if constexpr (!is_fp32) {
    eager_map<step::cast_x_to_f32>(n, s, [=] __device__(std::int64_t i) { A[i] = to_float(x[i]); });
    xf = A;
  }
  eager_row_sum<step::mean_over_cols>(xf, mean, rows, cols, s, inv_cols);
  float* xc = B;
  eager_map<step::minus_mean>(n, s, [=] __device__(std::int64_t i) { xc[i] = xf[i] - mean[i / cols]; });
  float* sq = A;
  eager_map<step::square>(n, s, [=] __device__(std::int64_t i) { sq[i] = xc[i] * xc[i]; });
  eager_row_sum<step::var_over_cols>(sq, var, rows, cols, s, inv_cols);
  eager_map<step::plus_eps>(rows, s, [=] __device__(std::int64_t i) { ve[i] = var[i] + eps; });
  eager_map<step::rsqrt>(rows, s, [=] __device__(std::int64_t i) { rstd[i] = rsqrtf(ve[i]); });
  float* xh = C;
  eager_map<step::times_rstd>(n, s, [=] __device__(std::int64_t i) { xh[i] = xc[i] * rstd[i / cols]; });
  const float* wf = reinterpret_cast<const float*>(w);
  if constexpr (!is_fp32) {
    eager_map<step::cast_weight_to_f32>(cols, s, [=] __device__(std::int64_t i) { wf_buf[i] = to_float(w[i]); });
    wf = wf_buf;
  }

  // Autograd of the affine.
  const float* dyf = reinterpret_cast<const float*>(dy);
  if constexpr (!is_fp32) {
    eager_map<step::cast_dy_to_f32>(n, s, [=] __device__(std::int64_t i) { A[i] = to_float(dy[i]); });
    dyf = A;
  }
  eager_col_sum<step::dbias_sum_over_rows>(dyf, dbias, rows, cols, partials, s);
  float* p = D;
  eager_map<step::dy_times_xhat>(n, s, [=] __device__(std::int64_t i) { p[i] = dyf[i] * xh[i]; });
  eager_col_sum<step::dweight_sum_over_rows>(p, dweight, rows, cols, partials, s);
  float* dxh = D;
  eager_map<step::dy_times_weight>(n, s, [=] __device__(std::int64_t i) { dxh[i] = dyf[i] * wf[i % cols]; });

  // Autograd of xh = xc * rstd.
  float* dxc1 = C;
  eager_map<step::dxhat_times_rstd>(n, s, [=] __device__(std::int64_t i) { dxc1[i] = dxh[i] * rstd[i / cols]; });
  float* q = E;
  eager_map<step::dxhat_times_xc>(n, s, [=] __device__(std::int64_t i) { q[i] = dxh[i] * xc[i]; });
  eager_row_sum<step::drstd_sum_over_cols>(q, drstd, rows, cols, s);

  // Autograd of rstd = rsqrt(var + eps).
  eager_map<step::rstd_cubed>(rows, s, [=] __device__(std::int64_t i) { r3[i] = rstd[i] * rstd[i] * rstd[i]; });
  eager_map<step::drstd_times_rstd_cubed>(rows, s, [=] __device__(std::int64_t i) { t1[i] = drstd[i] * r3[i]; });
  eager_map<step::times_minus_half>(rows, s, [=] __device__(std::int64_t i) { dvar[i] = t1[i] * -0.5f; });

  // Autograd of var = sq.mean(-1) and sq = xc.pow(2); both paths into xc added.
  float* dsq = E;
  eager_map<step::dvar_expand_div_cols>(n, s, [=] __device__(std::int64_t i) { dsq[i] = dvar[i / cols] * inv_cols; });
  float* two_xc = A;
  eager_map<step::xc_times_2>(n, s, [=] __device__(std::int64_t i) { two_xc[i] = xc[i] * 2.0f; });
  float* dxc2 = D;
  eager_map<step::dsq_times_2xc>(n, s, [=] __device__(std::int64_t i) { dxc2[i] = dsq[i] * two_xc[i]; });
  float* dxc = E;
  eager_map<step::add_dxc_paths>(n, s, [=] __device__(std::int64_t i) { dxc[i] = dxc1[i] + dxc2[i]; });

  // Autograd of xc = xf - mean and mean = xf.mean(-1).
  eager_row_sum<step::dxc_sum_over_cols>(dxc, row_s, rows, cols, s);
  eager_map<step::negate>(rows, s, [=] __device__(std::int64_t i) { dmean[i] = -row_s[i]; });
  float* dxf2 = A;
  eager_map<step::dmean_expand_div_cols>(n, s, [=] __device__(std::int64_t i) { dxf2[i] = dmean[i / cols] * inv_cols; });
  float* dxf = is_fp32 ? reinterpret_cast<float*>(dx) : B;
  eager_map<step::add_dmean_term>(n, s, [=] __device__(std::int64_t i) { dxf[i] = dxc[i] + dxf2[i]; });
  if constexpr (!is_fp32) eager_map<step::cast_dx_to_dtype>(n, s, [=] __device__(std::int64_t i) { dx[i] = from_float<T>(dxf[i]); });
}

KWB_REGISTER_VARIANT(Variant{
    .op = "layernorm_bwd",
    .name = "baseline_eager_31_launches",
    .role = Role::baseline,
    .description = "statistics op by op, then autograd of the unfused LayerNorm node by node "
                   "(fp32 affine, column sums in two launches)",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = {},
    .workspace_bytes = workspace_bytes,
});

}  // namespace
}  // namespace kwb
