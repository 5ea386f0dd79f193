// mhc_rmsnorm_project_fwd baseline_eager_cublaslt: the RMSNorm + projection as PyTorch eager runs
// it (K = n * C, P = 32), one launch per framework op:
//
//   x = H.flatten(1).float()                       # 1  cast to fp32 (bf16 only; a no-op in fp32)
//   sq = x.pow(2)                                  # 2  pow
//   ms = sq.mean(-1)                               # 3  row reduction (one block per token)
//   r = torch.rsqrt(ms + eps)                      # 4  add, 5  rsqrt (two elementwise launches)
//   xn = x * r[:, None]                            # 6  broadcast mul
//   Z = xn @ W.float()                             # 7  cast of W (bf16 only), 8  cuBLASLt fp32 GEMM
//
// 8 launches in bf16, 6 in fp32. x, sq and xn are [T, K] fp32 intermediates written and read
// back (sq and xn share one buffer, as the caching allocator would recycle sq's block). The
// GEMM is fp32 with fp32 compute (allow_tf32 off, PyTorch's default for matmul), planned once
// in prepare() (kernels/common/cublaslt_matmul.cuh). In bf16 at 65536 x 1024 the chain moves
// ~0.5 GB (cast in) + 1 GB (cast out) + 2 GB (pow) + 1 GB (mean) + 3 GB (mul) + 1 GB (GEMM):
// ~8.5 GB, ~3 ms at 3000 GB/s, against ~0.5 GB for one fused pass.
#include <cstdint>
#include <memory>
#include <type_traits>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/align_up.hpp"
#include "kernels/common/cublaslt_matmul.cuh"
#include "kernels/common/eager_ops.cuh"
#include "reference/mhc.hpp"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<cast_h_to_f32>, ...).
namespace step {
struct cast_h_to_f32;
struct square;
struct mean_over_k;
struct plus_eps;
struct rsqrt;
struct times_rstd;
struct cast_weight_to_f32;
}  // namespace step

namespace {


// Workspace: cuBLASLt's, W in fp32, x in fp32 (bf16 only), sq / xn, ms + eps, in that order.
struct Buffers {
  std::size_t wf, x, work, ms, total;
};
Buffers buffers(const MhcAxes& axes, DType dtype) {
  const auto t = static_cast<std::size_t>(axes.tokens), k = static_cast<std::size_t>(axes.flat_len());
  const bool cast = dtype != DType::fp32;
  Buffers b{};
  b.wf = kLtWorkspaceBytes;
  b.x = b.wf + (cast ? align_up(k * kMhcProjectWidth * 4) : 0);
  b.work = b.x + (cast ? align_up(t * k * 4) : 0);
  b.ms = b.work + align_up(t * k * 4);
  b.total = b.ms + align_up(t * 4);
  return b;
}

template <class T>
void launch_typed(const LaunchArgs& a) {
  const auto axes = MhcAxes::of(a.shape);
  const std::int64_t tokens = axes.tokens, k = axes.flat_len();
  const std::int64_t n = tokens * k;
  const T* h = a.tensor<const T>("H");
  const T* w = a.tensor<const T>("W");
  float* z = a.tensor<float>("Z");
  float* r = a.tensor<float>("r");
  const Buffers b = buffers(axes, a.dtype);
  char* ws = static_cast<char*>(a.workspace);
  const float* x;
  const float* wf;
  if constexpr (std::is_same_v<T, float>) {
    x = h;
    wf = w;
  } else {
    float* xc = reinterpret_cast<float*>(ws + b.x);
    eager_map<step::cast_h_to_f32>(n, a.stream, [=] __device__(std::int64_t i) { xc[i] = to_float(h[i]); });
    x = xc;
  }
  float* work = reinterpret_cast<float*>(ws + b.work);
  float* ms = reinterpret_cast<float*>(ws + b.ms);
  eager_map<step::square>(n, a.stream, [=] __device__(std::int64_t i) { work[i] = x[i] * x[i]; });
  eager_row_sum<step::mean_over_k>(work, ms, tokens, k, a.stream, 1.0f / static_cast<float>(k));
  const float eps = static_cast<float>(kMhcRmsEps);
  eager_map<step::plus_eps>(tokens, a.stream, [=] __device__(std::int64_t i) { ms[i] = ms[i] + eps; });
  eager_map<step::rsqrt>(tokens, a.stream, [=] __device__(std::int64_t i) { r[i] = rsqrtf(ms[i]); });
  eager_map<step::times_rstd>(n, a.stream, [=] __device__(std::int64_t i) { work[i] = x[i] * r[i / k]; });
  if constexpr (!std::is_same_v<T, float>) {
    float* wc = reinterpret_cast<float*>(ws + b.wf);
    eager_map<step::cast_weight_to_f32>(k * kMhcProjectWidth, a.stream, [=] __device__(std::int64_t i) { wc[i] = to_float(w[i]); });
    wf = wc;
  }
  // Row-major Z [T, P] = xn [T, K] @ Wf [K, P] is column-major Z^T (P x T) = Wf^T (P x K, ld P)
  // times xn^T (K x T, ld K): no transposes.
  a.state_as<LtMatmul>().run(wf, work, z, a.workspace, a.stream);
}

std::shared_ptr<void> prepare(const LaunchArgs& a) {
  const auto axes = MhcAxes::of(a.shape);
  const std::int64_t tokens = axes.tokens, k = axes.flat_len();
  return std::make_shared<LtMatmul>(lt_f32_spec(false, false, kMhcProjectWidth, tokens, k, kMhcProjectWidth, k,
                                       kMhcProjectWidth));
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mhc_rmsnorm_project_fwd",
    .name = "baseline_eager_cublaslt",
    .role = Role::baseline,
    .description = "op by op as PyTorch eager: cast, pow, mean, add, rsqrt, mul, cast W, cuBLASLt fp32 GEMM",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = {},
    .workspace_bytes = [](const Shape& s, DType dtype) { return buffers(MhcAxes::of(s), dtype).total; },
    .uses = {"cuBLASLt"},
    .math = "fp32",
    .prepare = prepare,
});

}  // namespace
}  // namespace kwb
