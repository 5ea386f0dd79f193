// mhc_rmsnorm_project_bwd_dx baseline_eager_cublaslt: dH as PyTorch autograd runs the backward of
// the forward's graph (x = H.flatten(1).float(); r = rsqrt(x.pow(2).mean(-1) + eps);
// Z = (x * r[:, None]) @ W.float()), given dZ and the saved r; K = n * C:
//
//   Wf = W.float()                                 # 1  cast (bf16 only)
//   dxn = dZ @ Wf.t()                              # 2  MmBackward0: cuBLASLt fp32 GEMM
//   x = H.flatten(1).float()                       # 3  cast (bf16 only; autograd saved it, the
//                                                  #    op's inputs hold H only: recomputed)
//   dx_a = dxn * r[:, None]                        # 4  MulBackward0, gradient of x
//   dr = (dxn * x).sum(-1)                         # 5  mul, 6  row reduction (gradient of r)
//   dms = -0.5 * dr * r ** 3                       # 7  RsqrtBackward0 (AddBackward0 passes it on)
//   dsq = dms[:, None].expand(T, K) / K            # 8  MeanBackward0
//   dx_b = dsq * 2 * x                             # 9  PowBackward0
//   dx = dx_a + dx_b                               # 10 gradient accumulation
//   dH = dx.to(H.dtype).view(T, n, C)              # 11 ToCopyBackward0 (bf16 only)
//
// 11 launches in bf16, 8 in fp32. Four [T, K] fp32 intermediates (x, dxn, dx_a, one reused for
// dxn * x, dsq and, as the allocator would recycle them, dx_b into dxn's block). At 65536 x 1024
// bf16 the chain moves ~12 GB against ~1 GB for one fused pass.
#include <cstdint>
#include <memory>
#include <type_traits>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/align_up.hpp"
#include "kernels/common/cublaslt_matmul.cuh"
#include "kernels/common/eager_ops.cuh"
#include "reference/mhc.hpp"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<cast_weight_to_f32>, ...).
namespace step {
struct cast_weight_to_f32;
struct cast_h_to_f32;
struct dxn_times_r;
struct dxn_times_x;
struct dr_sum_over_k;
struct rsqrt_backward;
struct dms_expand_div_k;
struct dsq_times_2x;
struct add_grad_paths_to_dh;
struct add_grad_paths;
struct cast_dh_to_dtype;
}  // namespace step

namespace {


// Workspace: cuBLASLt's, Wf and x (bf16 only), dxn, dx_a, tmp, dr and dms (T each).
struct Buffers {
  std::size_t wf, x, dxn, dxa, tmp, dr, dms, total;
};
Buffers buffers(const MhcAxes& axes, DType dtype) {
  const auto t = static_cast<std::size_t>(axes.tokens), k = static_cast<std::size_t>(axes.flat_len());
  const bool cast = dtype != DType::fp32;
  const std::size_t big = align_up(t * k * 4);
  Buffers b{};
  b.wf = kLtWorkspaceBytes;
  b.x = b.wf + (cast ? align_up(k * kMhcProjectWidth * 4) : 0);
  b.dxn = b.x + (cast ? big : 0);
  b.dxa = b.dxn + big;
  b.tmp = b.dxa + big;
  b.dr = b.tmp + big;
  b.dms = b.dr + align_up(t * 4);
  b.total = b.dms + align_up(t * 4);
  return b;
}

template <class T>
void launch_typed(const LaunchArgs& a) {
  const auto axes = MhcAxes::of(a.shape);
  const std::int64_t tokens = axes.tokens, k = axes.flat_len();
  const std::int64_t n = tokens * k;
  const T* h = a.tensor<const T>("H");
  const T* w = a.tensor<const T>("W");
  const float* r = a.tensor<const float>("r");
  const float* dz = a.tensor<const float>("dZ");
  T* dh = a.tensor<T>("dH");
  const Buffers b = buffers(axes, a.dtype);
  char* ws = static_cast<char*>(a.workspace);
  float* dxn = reinterpret_cast<float*>(ws + b.dxn);
  float* dxa = reinterpret_cast<float*>(ws + b.dxa);
  float* tmp = reinterpret_cast<float*>(ws + b.tmp);
  float* dr = reinterpret_cast<float*>(ws + b.dr);
  float* dms = reinterpret_cast<float*>(ws + b.dms);
  const float* wf = nullptr;
  const float* x = nullptr;
  if constexpr (std::is_same_v<T, float>) {
    wf = w;
  } else {
    float* wc = reinterpret_cast<float*>(ws + b.wf);
    eager_map<step::cast_weight_to_f32>(k * kMhcProjectWidth, a.stream, [=] __device__(std::int64_t i) { wc[i] = to_float(w[i]); });
    wf = wc;
  }
  // Row-major dxn [T, K] = dZ [T, P] @ Wf^T is column-major dxn^T (K x T, ld K) = op(Wf) (K x P)
  // times dZ^T (P x T, ld P), where Wf is stored column-major P x K (ld P) and transposed.
  a.state_as<LtMatmul>().run(wf, dz, dxn, a.workspace, a.stream);
  if constexpr (std::is_same_v<T, float>) {
    x = h;
  } else {
    float* xc = reinterpret_cast<float*>(ws + b.x);
    eager_map<step::cast_h_to_f32>(n, a.stream, [=] __device__(std::int64_t i) { xc[i] = to_float(h[i]); });
    x = xc;
  }
  eager_map<step::dxn_times_r>(n, a.stream, [=] __device__(std::int64_t i) { dxa[i] = dxn[i] * r[i / k]; });
  eager_map<step::dxn_times_x>(n, a.stream, [=] __device__(std::int64_t i) { tmp[i] = dxn[i] * x[i]; });
  eager_row_sum<step::dr_sum_over_k>(tmp, dr, tokens, k, a.stream);
  eager_map<step::rsqrt_backward>(tokens, a.stream, [=] __device__(std::int64_t i) {
    const float ri = r[i];
    dms[i] = -0.5f * dr[i] * ri * ri * ri;
  });
  const float inv_k = 1.0f / static_cast<float>(k);
  eager_map<step::dms_expand_div_k>(n, a.stream, [=] __device__(std::int64_t i) { tmp[i] = dms[i / k] * inv_k; });
  eager_map<step::dsq_times_2x>(n, a.stream, [=] __device__(std::int64_t i) { dxn[i] = tmp[i] * 2.0f * x[i]; });
  if constexpr (std::is_same_v<T, float>) {
    eager_map<step::add_grad_paths_to_dh>(n, a.stream, [=] __device__(std::int64_t i) { dh[i] = dxa[i] + dxn[i]; });
  } else {
    eager_map<step::add_grad_paths>(n, a.stream, [=] __device__(std::int64_t i) { dxa[i] = dxa[i] + dxn[i]; });
    eager_map<step::cast_dh_to_dtype>(n, a.stream, [=] __device__(std::int64_t i) { dh[i] = from_float<T>(dxa[i]); });
  }
}

std::shared_ptr<void> prepare(const LaunchArgs& a) {
  const auto axes = MhcAxes::of(a.shape);
  const std::int64_t tokens = axes.tokens, k = axes.flat_len();
  return std::make_shared<LtMatmul>(lt_f32_spec(true, false, k, tokens, kMhcProjectWidth, kMhcProjectWidth,
                                       kMhcProjectWidth, k));
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mhc_rmsnorm_project_bwd_dx",
    .name = "baseline_eager_cublaslt",
    .role = Role::baseline,
    .description = "op by op as PyTorch autograd: cast W, cuBLASLt dZ @ W^T, cast H, mul, mul, sum, "
                   "rsqrt/mean/pow backward, add, cast",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = {},
    .workspace_bytes = [](const Shape& s, DType dtype) { return buffers(MhcAxes::of(s), dtype).total; },
    .uses = {"cuBLASLt"},
    .prepare = prepare,
});

}  // namespace
}  // namespace kwb
