// linear_cross_entropy baseline_eager_materialised_logits: the lm head and its loss as eager
// PyTorch runs them, the [N, V] logits and their gradient in memory, one launch per line:
//
//   logits = h @ W.T                               #  1 cuBLASLt GEMM, [N, V] in the dtype
//   lf = logits.float()                            #  2 cast (fp16/bf16; fp32: the same tensor)
//   logp = F.log_softmax(lf, -1)                   #  3 one kernel per row block
//   loss = F.nll_loss(logp, labels, reduction='none', ignore_index=-100)   # 4 gather per token
//   loss.sum().backward():
//     seed = ones_like(loss.sum())                 #  5 fill (sum's backward is an expand: a view)
//     grad_logp = zeros_like(logp)                 #  6 nll_loss_backward: zero fill
//     grad_logp[n, labels[n]] = -seed              #  7   then the scatter
//     dlf = grad_logp - exp(logp) * grad_logp.sum(-1)   # 8 log_softmax_backward
//     dl = dlf.to(dtype)                           #  9 the .float() backward (fp16/bf16)
//     dh = dl @ W                                  # 10 cuBLASLt GEMM
//     dW = dl.T @ h                                # 11 cuBLASLt GEMM
//
// 11 launches in fp16/bf16, 9 in fp32. GEMMs as torch: outputs in the dtype, fp32 accumulate,
// fp32 in full fp32 (allow_tf32 off, PyTorch's matmul default).
//
// Workspace (what chunking saves): the dtype logits [N, V] (their block reused for dl, as the
// caching allocator hands a freed block of the same size to the next request), the fp32 upcast
// (reused for grad_logp), logp and dlf, fp32 [N, V] each: 14 bytes per logit in fp16/bf16, and in
// fp32 12 (logits = lf, reused for grad_logp; logp; dlf, which is dl), plus cuBLASLt's 32 MB.
// At 8192 x 128256 bf16: 14.7 GB. Shapes beyond 60 GiB are refused.
//
// Napkin math (bf16, 8192 x 4096 x 128256): GEMMs 25.8 TFLOP, ~35 ms at ~740 TFLOP/s; the eager
// chain moves ~9 passes over [N, V] of 2-4 bytes (cast 6 B, log_softmax 8+, nll, zeros 4,
// backward 12, cast 6 per logit: ~45 B x 1.05e9 = 47 GB), ~16 ms at 3000 GB/s: ~50 ms in all.
#include <cstdint>
#include <memory>
#include <type_traits>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/align_up.hpp"
#include "kernels/common/cublaslt_matmul.cuh"
#include "kernels/common/eager_ops.cuh"
#include "kernels/common/vector_pack.cuh"
#include "kernels/linear_cross_entropy/lce_rows.cuh"
#include "reference/linear_cross_entropy.hpp"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<cast_logits_to_f32>, ...).
namespace step {
struct cast_logits_to_f32;
struct nll_loss;
struct ones_like_loss;
struct zero_grad_logp;
struct nll_loss_backward_scatter;
struct cast_dlogits_to_dtype;
}  // namespace step

namespace {

// Baseline: PyTorch's log_softmax over the last dim, logp = x - max - log(sum exp(x - max)).
__global__ void __launch_bounds__(kLceRowThreads)
lce_log_softmax_kernel(const float* __restrict__ x, float* __restrict__ logp, std::int64_t vocab) {
  __shared__ float scratch[32];
  const float* xr = x + blockIdx.x * vocab;
  float* lr = logp + blockIdx.x * vocab;
  float m = -INFINITY;
  for (std::int64_t v = threadIdx.x; v < vocab; v += blockDim.x) m = fmaxf(m, xr[v]);
  m = lce_block_max(m, scratch);
  float s = 0;
  for (std::int64_t v = threadIdx.x; v < vocab; v += blockDim.x) s += expf(xr[v] - m);
  const float lse = m + logf(block_sum(s, scratch));
  for (std::int64_t v = threadIdx.x; v < vocab; v += blockDim.x) lr[v] = xr[v] - lse;
}

// Baseline: PyTorch's log_softmax_backward, dx = g - exp(logp) * sum(g) per row (fp32 out).
__global__ void __launch_bounds__(kLceRowThreads)
lce_log_softmax_backward_kernel(const float* __restrict__ g, const float* __restrict__ logp, float* __restrict__ dx,
                                std::int64_t vocab) {
  __shared__ float scratch[32];
  const std::int64_t base = blockIdx.x * vocab;
  float s = 0;
  for (std::int64_t v = threadIdx.x; v < vocab; v += blockDim.x) s += g[base + v];
  s = block_sum(s, scratch);
  for (std::int64_t v = threadIdx.x; v < vocab; v += blockDim.x) dx[base + v] = g[base + v] - expf(logp[base + v]) * s;
}


// Byte offsets in the workspace: cuBLASLt's, the seed, then the [N, V] buffers.
struct Layout {
  std::size_t seed, logits_t, lf, logp, dlf, total;
};
Layout layout(const LceAxes& axes, DType dtype) {
  const std::size_t nv = static_cast<std::size_t>(axes.tokens) * static_cast<std::size_t>(axes.vocab);
  const bool cast = dtype != DType::fp32;
  Layout l{};
  l.seed = kLtWorkspaceBytes;
  l.logits_t = l.seed + 256;
  l.lf = l.logits_t + (cast ? align_up(nv * elem_size(elem_type_of(dtype))) : 0);
  l.logp = l.lf + align_up(nv * 4);
  l.dlf = l.logp + align_up(nv * 4);
  l.total = l.dlf + align_up(nv * 4);
  return l;
}

struct Plans {
  std::unique_ptr<LtMatmul> logits, dh, dw;
};

std::shared_ptr<void> prepare(const LaunchArgs& a) {
  const auto [n, d, v] = LceAxes::of(a.shape);
  const ElemType t = elem_type_of(a.dtype);
  auto spec = [t](bool ta, bool tb, std::int64_t m, std::int64_t nn, std::int64_t k, std::int64_t lda,
                  std::int64_t ldb, std::int64_t ldd) {
    LtMatmulSpec s = lt_f32_spec(ta, tb, m, nn, k, lda, ldb, ldd);
    s.ab_type = s.cd_type = t;  // tf32 stays off: PyTorch's default
    return s;
  };
  auto p = std::make_shared<Plans>();
  // Column-major views (cublaslt_matmul.cuh): logits^T (V x N) = W (D x V stored, transposed) h^T.
  p->logits = std::make_unique<LtMatmul>(spec(true, false, v, n, d, d, d, v));
  // dh^T (D x N) = W^T (W row-major is D x V col-major) dl^T (V x N).
  p->dh = std::make_unique<LtMatmul>(spec(false, false, d, n, v, d, v, d));
  // dW^T (D x V) = h^T (D x N) (dl^T)^T (dl^T stored V x N, transposed).
  p->dw = std::make_unique<LtMatmul>(spec(false, true, d, v, n, d, v, d));
  return p;
}

template <class T>
void launch_typed(const LaunchArgs& a) {
  constexpr bool cast = !std::is_same_v<T, float>;
  const auto axes = LceAxes::of(a.shape);
  const std::int64_t n = axes.tokens, v = axes.vocab, nv = n * v;
  const auto [h, w, labels, loss, dh, dw] = LceTensors<T>::of(a);
  const Layout l = layout(axes, a.dtype);
  char* ws = static_cast<char*>(a.workspace);
  float* seed = reinterpret_cast<float*>(ws + l.seed);
  T* logits = cast ? reinterpret_cast<T*>(ws + l.logits_t) : reinterpret_cast<T*>(ws + l.lf);
  float* lf = reinterpret_cast<float*>(ws + l.lf);
  float* logp = reinterpret_cast<float*>(ws + l.logp);
  float* dlf = reinterpret_cast<float*>(ws + l.dlf);
  const Plans& p = a.state_as<Plans>();
  const auto rows = static_cast<unsigned>(n);

  p.logits->run(w, h, logits, a.workspace, a.stream);                                                       // 1
  if constexpr (cast) eager_map<step::cast_logits_to_f32>(nv, a.stream, [=] __device__(std::int64_t i) { lf[i] = to_float(logits[i]); });  // 2
  lce_log_softmax_kernel<<<rows, kLceRowThreads, 0, a.stream>>>(lf, logp, v);                                // 3
  eager_map<step::nll_loss>(n, a.stream, [=] __device__(std::int64_t i) {                                                   // 4
    const int label = labels[i];
    loss[i] = cross_entropy_label_counts(label, v) ? -logp[i * v + label] : 0.0f;
  });
  eager_map<step::ones_like_loss>(1, a.stream, [=] __device__(std::int64_t) { *seed = 1.0f; });                                   // 5
  float* grad_logp = lf;  // the upcast (fp32: the logits) is dead: its block holds the nll gradient
  eager_map<step::zero_grad_logp>(nv, a.stream, [=] __device__(std::int64_t i) { grad_logp[i] = 0.0f; });                         // 6
  eager_map<step::nll_loss_backward_scatter>(n, a.stream, [=] __device__(std::int64_t i) {                                                   // 7
    const int label = labels[i];
    if (cross_entropy_label_counts(label, v)) grad_logp[i * v + label] = -*seed;
  });
  lce_log_softmax_backward_kernel<<<rows, kLceRowThreads, 0, a.stream>>>(grad_logp, logp, dlf, v);          // 8
  const T* dl = reinterpret_cast<const T*>(dlf);
  if constexpr (cast) {
    T* dlt = logits;  // the dtype logits' block, free since the cast
    eager_map<step::cast_dlogits_to_dtype>(nv, a.stream, [=] __device__(std::int64_t i) { dlt[i] = from_float<T>(dlf[i]); });            // 9
    dl = dlt;
  }
  p.dh->run(w, dl, dh, a.workspace, a.stream);                                                              // 10
  p.dw->run(h, dl, dw, a.workspace, a.stream);                                                              // 11
}

constexpr double kMaxWorkspaceBytes = 60.0 * (1ull << 30);

KWB_REGISTER_VARIANT(Variant{
    .op = "linear_cross_entropy",
    .name = "baseline_eager_materialised_logits",
    .role = Role::baseline,
    .description = "eager PyTorch: GEMM to [N, V] logits, .float(), log_softmax, nll_loss; backward: seed, zeros, "
                   "scatter, log_softmax_backward, cast, two GEMMs (14 B per logit of intermediates)",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = [](const Shape& s, DType dtype) -> std::optional<std::string> {
      const auto axes = LceAxes::of(s);
      if (static_cast<double>(layout(axes, dtype).total) > kMaxWorkspaceBytes)
        return "the materialised [N, V] logits and gradients need more than 60 GiB";
      return refuse_rows_beyond_grid(axes.tokens);
    },
    .workspace_bytes = [](const Shape& s, DType dtype) { return layout(LceAxes::of(s), dtype).total; },
    .uses = {"cuBLASLt"},
    .math = "fp32: fp32",
    .prepare = prepare,
});

}  // namespace
}  // namespace kwb
