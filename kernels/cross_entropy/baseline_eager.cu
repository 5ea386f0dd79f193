// cross_entropy baseline_eager_8_launches: a training step's loss and logits gradient as eager
// PyTorch runs them, with the usual upcast of the logits before the loss:
//
//   lf = logits.float()                          # 1 cast (bf16/fp16 only)
//   loss = F.cross_entropy(lf, labels)           # 2 log_softmax -> fp32 [T, V] log-probabilities
//                                                # 3 nll_loss forward, mean: one single-block
//                                                #   kernel (sum and total weight, then divide)
//   loss.backward()                              # 4 fill the seed gradient (ones_like(loss))
//                                                # 5 nll_loss_backward: zero the fp32 [T, V] grad
//                                                # 6   then scatter -grad / total_weight at labels
//                                                #   (single block, as PyTorch's)
//                                                # 7 log_softmax_backward: g - exp(logp) * sum(g)
//   logits.grad                                  # 8 cast fp32 -> dtype (the .float() backward)
//
// Eight launches for fp16/bf16, six for fp32 (no casts: the log_softmax backward writes dlogits).
// log_softmax is one kernel in PyTorch (max, sum of exp and the write in one launch per row
// block), and so is it here; so is log_softmax_backward (the row sum of g and the write).
//
// Workspace (device memory beyond inputs and outputs, the point of chunking): the fp32
// log-probabilities logp [T, V] that autograd saves for the backward, the fp32 gradient of
// logp [T, V] and, for fp16/bf16, the fp32 upcast of the logits [T, V] and the fp32 dlogits
// before their cast. PyTorch frees the upcast once log_softmax has read it and its caching
// allocator hands the same block to the nll gradient, so they share one buffer here too:
//   fp16/bf16: 3 * T * V * 4 + 2 * 4 bytes (lf = grad_logp, logp, dlogits_f32; total_weight, seed)
//   fp32:      2 * T * V * 4 + 2 * 4 bytes (logp, grad_logp; total_weight, seed)
// At 8192 x 128256 in bf16 that is 12.6 GB of fp32 intermediates for 4.2 GB of logits and
// dlogits. One deviation, free of launches: when every label is -100 PyTorch's loss is 0/0 = NaN;
// the nll kernel here writes the op's 0 instead, so the baseline verifies like the fused kernels.
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/block_reduce.cuh"
#include "kernels/common/eager_ops.cuh"
#include "kernels/common/vector_pack.cuh"
#include "reference/cross_entropy.hpp"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<cast_logits_to_f32>, ...).
namespace step {
struct cast_logits_to_f32;
struct ones_like_loss;
struct zero_grad_logp;
struct cast_dlogits_to_dtype;
}  // namespace step

namespace {

constexpr int kNllThreads = 32;  // PyTorch's NLL_LOSS_THREADS: the reduction runs in one block

// logp[r, :] = x[r, :] - max - log(sum exp(x - max)): one block per row, three sweeps of the row
// (PyTorch's persistent softmax keeps short rows in registers; rows of 32K+ are swept like this).
__global__ void log_softmax_kernel(const float* x, float* logp, std::int64_t vocab) {
  __shared__ float scratch[32];
  const float* xr = x + blockIdx.x * vocab;
  float* lr = logp + blockIdx.x * vocab;
  float m = -INFINITY;
  for (std::int64_t c = threadIdx.x; c < vocab; c += blockDim.x) m = fmaxf(m, xr[c]);
  m = block_max(m, scratch);
  float s = 0;
  for (std::int64_t c = threadIdx.x; c < vocab; c += blockDim.x) s += expf(xr[c] - m);
  const float lse = m + logf(block_sum(s, scratch));
  for (std::int64_t c = threadIdx.x; c < vocab; c += blockDim.x) lr[c] = xr[c] - lse;
}

// nll_loss forward with reduction='mean': one block sums -logp[r, label[r]] over the tokens and
// counts the labelled ones (total_weight), then writes sum / total_weight (0 when no token counts,
// where PyTorch writes NaN).
__global__ void nll_loss_forward_kernel(const float* logp, const int* labels, std::int64_t tokens,
                                        std::int64_t vocab, float* loss, float* total_weight) {
  __shared__ float scratch[32];
  float sum = 0, count = 0;
  for (std::int64_t r = threadIdx.x; r < tokens; r += blockDim.x) {
    const int label = labels[r];
    if (cross_entropy_label_counts(label, vocab)) {
      sum -= logp[r * vocab + label];
      count += 1;
    }
  }
  sum = block_sum(sum, scratch);
  count = block_sum(count, scratch);
  if (threadIdx.x == 0) {
    *total_weight = count;
    *loss = count > 0 ? sum / count : 0.0f;
  }
}

// nll_loss backward's scatter: grad_logp[r, label[r]] = -seed / total_weight (one block).
__global__ void nll_loss_backward_kernel(const int* labels, std::int64_t tokens, std::int64_t vocab,
                                         const float* seed, const float* total_weight, float* grad_logp) {
  for (std::int64_t r = threadIdx.x; r < tokens; r += blockDim.x) {
    const int label = labels[r];
    if (cross_entropy_label_counts(label, vocab)) grad_logp[r * vocab + label] = -*seed / *total_weight;
  }
}

// dx = g - exp(logp) * sum(g), one block per row: the row sum, then the write.
template <class Out>
__global__ void log_softmax_backward_kernel(const float* g, const float* logp, Out* dx, std::int64_t vocab) {
  __shared__ float scratch[32];
  const std::int64_t base = blockIdx.x * vocab;
  float s = 0;
  for (std::int64_t c = threadIdx.x; c < vocab; c += blockDim.x) s += g[base + c];
  s = block_sum(s, scratch);
  for (std::int64_t c = threadIdx.x; c < vocab; c += blockDim.x)
    dx[base + c] = from_float<Out>(g[base + c] - expf(logp[base + c]) * s);
}

struct Workspace {
  float* logp;       // [T, V] the saved log-probabilities
  float* lf;         // [T, V] upcast logits, then (same block) the nll gradient
  float* dx_f32;     // [T, V] fp32 dlogits before the cast (fp16/bf16 only)
  float* total_weight;
  float* seed;
};

bool upcasts(DType dtype) { return dtype != DType::fp32; }

std::size_t workspace_bytes(const Shape& s, DType dtype) {
  const auto [tokens, vocab] = CrossEntropyAxes::of(s);
  const auto n = static_cast<std::size_t>(tokens) * static_cast<std::size_t>(vocab);
  return (upcasts(dtype) ? 3 : 2) * n * sizeof(float) + 2 * sizeof(float);
}

Workspace carve(void* base, std::int64_t n, DType dtype) {
  auto* p = static_cast<float*>(base);
  Workspace w{};
  w.logp = p;
  w.lf = w.logp + n;
  w.dx_f32 = upcasts(dtype) ? w.lf + n : nullptr;
  w.total_weight = w.lf + (upcasts(dtype) ? 2 : 1) * n;
  w.seed = w.total_weight + 1;
  return w;
}

template <class T>
void launch_typed(const LaunchArgs& a) {
  constexpr bool is_fp32 = std::is_same_v<T, float>;
  const CrossEntropyAxes shape = CrossEntropyAxes::of(a.shape);  // named, not bound: device lambdas capture
  const std::int64_t tokens = shape.tokens, vocab = shape.vocab, n = tokens * vocab;
  const Workspace ws = carve(a.workspace, n, a.dtype);
  const T* logits = a.tensor<const T>("logits");
  const auto* labels = a.tensor<const std::int32_t>("labels");
  auto* loss = a.tensor<float>("loss");
  T* dlogits = a.tensor<T>("dlogits");
  const auto rows = static_cast<unsigned>(tokens);

  const float* lf = reinterpret_cast<const float*>(logits);
  if constexpr (!is_fp32) {
    float* up = ws.lf;
    eager_map<step::cast_logits_to_f32>(n, a.stream, [=] __device__(std::int64_t i) { up[i] = to_float(logits[i]); });
    lf = up;
  }
  log_softmax_kernel<<<rows, 1024, 0, a.stream>>>(lf, ws.logp, vocab);
  nll_loss_forward_kernel<<<1, kNllThreads, 0, a.stream>>>(ws.logp, labels, tokens, vocab, loss, ws.total_weight);
  float* seed = ws.seed;
  eager_map<step::ones_like_loss>(1, a.stream, [=] __device__(std::int64_t) { *seed = 1.0f; });
  float* grad_logp = ws.lf;  // the upcast is dead: its block now holds the nll gradient
  eager_map<step::zero_grad_logp>(n, a.stream, [=] __device__(std::int64_t i) { grad_logp[i] = 0.0f; });
  nll_loss_backward_kernel<<<1, kNllThreads, 0, a.stream>>>(labels, tokens, vocab, seed, ws.total_weight,
                                                            grad_logp);
  if constexpr (is_fp32) {
    log_softmax_backward_kernel<float><<<rows, 1024, 0, a.stream>>>(grad_logp, ws.logp, dlogits, vocab);
  } else {
    float* dx = ws.dx_f32;
    log_softmax_backward_kernel<float><<<rows, 1024, 0, a.stream>>>(grad_logp, ws.logp, dx, vocab);
    eager_map<step::cast_dlogits_to_dtype>(n, a.stream, [=] __device__(std::int64_t i) { dlogits[i] = from_float<T>(dx[i]); });
  }
}

KWB_REGISTER_VARIANT(Variant{
    .op = "cross_entropy",
    .name = "baseline_eager_8_launches",
    .role = Role::baseline,
    .description = "eager PyTorch: .float(), log_softmax, nll_loss; backward: seed, zeros, nll scatter, "
                   "log_softmax_backward, cast (fp32 [T, V] log-probs and gradients in memory)",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = [](const Shape& s, DType) { return refuse_rows_beyond_grid(CrossEntropyAxes::of(s).tokens); },
    .workspace_bytes = workspace_bytes,
});

}  // namespace
}  // namespace kwb
