// qk_norm_fwd baseline_eager_16_launches: QK-norm as an eager framework runs it, op by op, Q
// then K (the same chain on each):
//
//   xf = x.float(); sq = xf.pow(2); ss = sq.sum(-1, keepdim=True); ss = ss + eps
//   r = torch.rsqrt(ss); xn = xf * r; xn = xn.to(dtype); out = xn * weight
//
// Eight launches per tensor for fp16/bf16 (six for fp32, where both casts are no-ops), sixteen
// for the pair: each a full pass through memory with fp32 intermediates, as a framework's
// generic elementwise and last-dim reduction kernels (kernels/common/eager_ops.cuh).
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
struct cast_xhat_to_dtype;
struct times_weight;
}  // namespace step

namespace {

// Intermediates of one tensor's chain, sized for Q (the larger) and reused for K.
struct Workspace {
  float *xf, *sq, *xn;         // [vectors, head_dim]
  float *ss, *ss_eps, *r;      // [vectors]
  void* xn_cast;               // [vectors, head_dim] in the case dtype
};

Workspace carve(void* base, std::int64_t vectors, std::int64_t head_dim) {
  const std::int64_t n = vectors * head_dim;
  auto* p = static_cast<float*>(base);
  Workspace w;
  w.xf = p;
  w.sq = w.xf + n;
  w.xn = w.sq + n;
  w.ss = w.xn + n;
  w.ss_eps = w.ss + vectors;
  w.r = w.ss_eps + vectors;
  w.xn_cast = w.r + vectors;
  return w;
}

std::size_t workspace_bytes(const Shape& s, DType dtype) {
  const QkNormDims d = QkNormDims::of(s);
  const auto vectors = static_cast<std::size_t>(d.max_vectors());
  const auto n = vectors * static_cast<std::size_t>(d.head_dim);
  return 3 * n * 4 + 3 * vectors * 4 + n * dtype_size(dtype);
}

// out = normalise(x) * weight over `vectors` head vectors: the eight framework ops.
template <class T>
void eager_chain(const T* x, const T* weight, T* out, std::int64_t vectors, std::int64_t head_dim,
                 const Workspace& ws, cudaStream_t stream) {
  constexpr bool is_fp32 = std::is_same_v<T, float>;
  const std::int64_t n = vectors * head_dim;
  const float* xf = reinterpret_cast<const float*>(x);
  if constexpr (!is_fp32) {
    float* dst = ws.xf;
    eager_map<step::cast_x_to_f32>(n, stream, [=] __device__(std::int64_t i) { dst[i] = to_float(x[i]); });
    xf = ws.xf;
  }
  float* sq = ws.sq;
  eager_map<step::square>(n, stream, [=] __device__(std::int64_t i) { sq[i] = xf[i] * xf[i]; });
  eager_row_sum<step::sum_sq_over_head_dim>(ws.sq, ws.ss, vectors, head_dim, stream);
  const float* ss = ws.ss;
  float* ss_eps = ws.ss_eps;
  const float eps = static_cast<float>(kQkNormEps);
  eager_map<step::plus_eps>(vectors, stream, [=] __device__(std::int64_t i) { ss_eps[i] = ss[i] + eps; });
  float* r = ws.r;
  eager_map<step::rsqrt>(vectors, stream, [=] __device__(std::int64_t i) { r[i] = rsqrtf(ss_eps[i]); });
  float* xn = ws.xn;
  eager_map<step::times_rstd>(n, stream, [=] __device__(std::int64_t i) { xn[i] = xf[i] * r[i / head_dim]; });
  const T* xn_t = reinterpret_cast<const T*>(ws.xn);
  if constexpr (!is_fp32) {
    T* dst = static_cast<T*>(ws.xn_cast);
    eager_map<step::cast_xhat_to_dtype>(n, stream, [=] __device__(std::int64_t i) { dst[i] = from_float<T>(xn[i]); });
    xn_t = dst;
  }
  eager_map<step::times_weight>(n, stream, [=] __device__(std::int64_t i) {
    out[i] = from_float<T>(to_float(xn_t[i]) * to_float(weight[i % head_dim]));
  });
}

template <class T>
void launch(const LaunchArgs& a) {
  const QkNormDims d = QkNormDims::of(a.shape);
  const Workspace ws = carve(a.workspace, d.max_vectors(), d.head_dim);
  eager_chain<T>(a.tensor<const T>("q"), a.tensor<const T>("q_weight"), a.tensor<T>("q_out"), d.q_vectors(), d.head_dim,
                 ws, a.stream);
  eager_chain<T>(a.tensor<const T>("k"), a.tensor<const T>("k_weight"), a.tensor<T>("k_out"), d.k_vectors(), d.head_dim,
                 ws, a.stream);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "qk_norm_fwd",
    .name = "baseline_eager_16_launches",
    .role = Role::baseline,
    .description = "op by op as eager PyTorch, Q then K: cast, pow, sum, +eps, rsqrt, scale, cast, *weight",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = {},
    .workspace_bytes = workspace_bytes,
});

}  // namespace
}  // namespace kwb
