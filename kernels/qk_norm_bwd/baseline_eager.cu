// qk_norm_bwd baseline_eager_38_launches: the eager chain of qk_norm_fwd recomputed (as under
// activation checkpointing: the op's inputs are q, k, never saved statistics), then the
// launches of PyTorch autograd's backward through it, Q then K:
//
//   recompute: xf = x.float(); sq = xf.pow(2); ss = sq.sum(-1, keepdim=True); ss = ss + eps
//              r = torch.rsqrt(ss); xn = xf * r                              (out = xn.to(dtype) * w)
//   backward:  g_c = dy * w;  dw = (dy * xn).sum((0, 1), dtype=float32)     (mul; col sum: 2)
//              g = g_c (kept in fp32);  dxf1 = g * r                           (MulBackward wrt xf)
//              gr = (g * xf).sum(-1, keepdim=True)                           (MulBackward wrt r)
//              gss = gr * -0.5 * r^3                                         (rsqrt backward)
//              p = xf.pow(1); p = p * 2; dxf2 = gss * p                       (pow backward)
//              dxf = dxf1 + dxf2;  dx = dxf.to(dtype)                         (accumulate; cast)
//
// 6 + 13 = 19 launches per tensor for fp16/bf16 (17 for fp32, where the two casts are
// no-ops), 38 for the pair. The product dy * xn is kept in fp32 for the column sum, which
// reads fp32 (kernels/common/eager_ops.cuh).
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/eager_ops.cuh"
#include "reference/qk_norm.hpp"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<cast_x_to_f32>, ...).
namespace step {
struct cast_x_to_f32;
struct square;
struct sum_sq_over_head_dim;
struct plus_eps;
struct rsqrt;
struct times_rstd;
struct dy_times_weight;
struct dy_times_xhat;
struct dweight_sum_over_rows;
struct grad_times_rstd;
struct grad_times_x;
struct drstd_sum_over_head_dim;
struct rsqrt_backward;
struct x_pow_1;
struct times_2;
struct dss_times_2x;
struct add_grad_paths_to_dx;
struct add_grad_paths;
struct cast_dx_to_dtype;
}  // namespace step

namespace {

constexpr int kElementBuffers = 11;  // fp32 [vectors, head_dim] intermediates
constexpr int kRowBuffers = 5;       // fp32 [vectors] intermediates

// Intermediates of one tensor's chain, sized for Q (the larger) and reused for K.
struct Workspace {
  float *xf, *sq, *xn, *prod, *g, *dxf1, *gx, *p1, *p2, *dxf2, *dxf;  // [vectors, head_dim]
  float *ss, *ss_eps, *r, *gr, *gss;                                  // [vectors]
  float* col_partials;                                                // [parts, head_dim]
};

Workspace carve(void* base, std::int64_t vectors, std::int64_t head_dim) {
  const std::int64_t n = vectors * head_dim;
  float* p = static_cast<float*>(base);
  Workspace w;
  float** element[] = {&w.xf, &w.sq, &w.xn, &w.prod, &w.g, &w.dxf1, &w.gx, &w.p1, &w.p2, &w.dxf2, &w.dxf};
  for (float** b : element) { *b = p; p += n; }
  float** row[] = {&w.ss, &w.ss_eps, &w.r, &w.gr, &w.gss};
  for (float** b : row) { *b = p; p += vectors; }
  w.col_partials = p;
  return w;
}

std::size_t workspace_bytes(const Shape& s, DType) {
  const QkNormDims d = QkNormDims::of(s);
  const auto vectors = static_cast<std::size_t>(d.max_vectors());
  const auto head_dim = static_cast<std::size_t>(d.head_dim);
  const std::size_t n = vectors * head_dim;
  return (kElementBuffers * n + kRowBuffers * vectors +
          static_cast<std::size_t>(eager_col_sum_parts(d.max_vectors())) * head_dim) * 4;
}

template <class T>
void eager_backward(const T* x, const T* weight, const T* dy, T* dx, float* dw, std::int64_t vectors,
                    std::int64_t head_dim, const Workspace& ws, cudaStream_t stream) {
  constexpr bool is_fp32 = std::is_same_v<T, float>;
  const std::int64_t n = vectors * head_dim;
  const float eps = static_cast<float>(kQkNormEps);
  // Recompute (7 launches; 5 for fp32).
  const float* xf = reinterpret_cast<const float*>(x);
  if constexpr (!is_fp32) {
    float* dst = ws.xf;
    eager_map<step::cast_x_to_f32>(n, stream, [=] __device__(std::int64_t i) { dst[i] = to_float(x[i]); });
    xf = ws.xf;
  }
  float *sq = ws.sq, *ss_eps = ws.ss_eps, *r = ws.r, *xn = ws.xn;
  const float* ss = ws.ss;
  eager_map<step::square>(n, stream, [=] __device__(std::int64_t i) { sq[i] = xf[i] * xf[i]; });
  eager_row_sum<step::sum_sq_over_head_dim>(ws.sq, ws.ss, vectors, head_dim, stream);
  eager_map<step::plus_eps>(vectors, stream, [=] __device__(std::int64_t i) { ss_eps[i] = ss[i] + eps; });
  eager_map<step::rsqrt>(vectors, stream, [=] __device__(std::int64_t i) { r[i] = rsqrtf(ss_eps[i]); });
  eager_map<step::times_rstd>(n, stream, [=] __device__(std::int64_t i) { xn[i] = xf[i] * r[i / head_dim]; });
  // Backward of out = xn_c * w (4 launches). The gradient g = dy * w stays in fp32 (as under
  // autocast, where the multiply's backward runs in fp32): rounded to fp16 first, the
  // cancellation in dx = r (g - xhat (g . xhat)) magnifies that rounding past the fp16
  // tolerance (measured on an H100: every fp16 edge case failed).
  float* g = ws.g;
  eager_map<step::dy_times_weight>(n, stream, [=] __device__(std::int64_t i) { g[i] = to_float(dy[i]) * to_float(weight[i % head_dim]); });
  float* prod = ws.prod;
  // dy * xn in fp32, not against xn rounded to the dtype: summed over every token and head, the
  // rounding of each xn would exceed the fp32 tolerance of the weight gradient (measured on an
  // H100: every bf16 and fp16 case failed on dq_weight).
  eager_map<step::dy_times_xhat>(n, stream, [=] __device__(std::int64_t i) { prod[i] = to_float(dy[i]) * xn[i]; });
  eager_col_sum<step::dweight_sum_over_rows>(ws.prod, dw, vectors, head_dim, ws.col_partials, stream);
  // Backward of xn = xf * r (3 launches).
  float *dxf1 = ws.dxf1, *gx = ws.gx;
  eager_map<step::grad_times_rstd>(n, stream, [=] __device__(std::int64_t i) { dxf1[i] = g[i] * r[i / head_dim]; });
  eager_map<step::grad_times_x>(n, stream, [=] __device__(std::int64_t i) { gx[i] = g[i] * xf[i]; });
  eager_row_sum<step::drstd_sum_over_head_dim>(ws.gx, ws.gr, vectors, head_dim, stream);
  // Backward of r = rsqrt(ss), ss = sq.sum + eps, sq = xf.pow(2), and the sum of both paths to xf
  // (6 launches; 5 for fp32).
  const float* gr = ws.gr;
  float *gss = ws.gss, *p1 = ws.p1, *p2 = ws.p2, *dxf2 = ws.dxf2, *dxf = ws.dxf;
  eager_map<step::rsqrt_backward>(vectors, stream, [=] __device__(std::int64_t i) { gss[i] = gr[i] * -0.5f * r[i] * r[i] * r[i]; });
  eager_map<step::x_pow_1>(n, stream, [=] __device__(std::int64_t i) { p1[i] = xf[i]; });  // xf.pow(1)
  eager_map<step::times_2>(n, stream, [=] __device__(std::int64_t i) { p2[i] = p1[i] * 2.0f; });
  eager_map<step::dss_times_2x>(n, stream, [=] __device__(std::int64_t i) { dxf2[i] = gss[i / head_dim] * p2[i]; });
  if constexpr (is_fp32) {
    eager_map<step::add_grad_paths_to_dx>(n, stream, [=] __device__(std::int64_t i) { dx[i] = dxf1[i] + dxf2[i]; });
  } else {
    eager_map<step::add_grad_paths>(n, stream, [=] __device__(std::int64_t i) { dxf[i] = dxf1[i] + dxf2[i]; });
    eager_map<step::cast_dx_to_dtype>(n, stream, [=] __device__(std::int64_t i) { dx[i] = from_float<T>(dxf[i]); });
  }
}

template <class T>
void launch(const LaunchArgs& a) {
  const QkNormDims d = QkNormDims::of(a.shape);
  const Workspace ws = carve(a.workspace, d.max_vectors(), d.head_dim);
  eager_backward<T>(a.tensor<const T>("q"), a.tensor<const T>("q_weight"), a.tensor<const T>("dq_out"),
                    a.tensor<T>("dq"), a.tensor<float>("dq_weight"), d.q_vectors(), d.head_dim, ws, a.stream);
  eager_backward<T>(a.tensor<const T>("k"), a.tensor<const T>("k_weight"), a.tensor<const T>("dk_out"),
                    a.tensor<T>("dk"), a.tensor<float>("dk_weight"), d.k_vectors(), d.head_dim, ws, a.stream);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "qk_norm_bwd",
    .name = "baseline_eager_38_launches",
    .role = Role::baseline,
    .description = "eager forward chain recomputed, then autograd's backward op by op, Q then K (fp32 "
                   "intermediates, weight gradients by two-stage column sums)",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = {},
    .workspace_bytes = workspace_bytes,
});

}  // namespace
}  // namespace kwb
