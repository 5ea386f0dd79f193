// attention_fwd baseline_eager_cublaslt: attention with materialised scores, as Hugging Face's
// eager_attention_forward runs it on bshd inputs (PyTorch eager, one launch per framework op):
//
//   q = q.transpose(1, 2)                                    # view [b, h, s, d]
//   k = repeat_kv(k.transpose(1, 2), h // kvh)               # 1  expand + reshape: copy [b, h, s, d]
//   v = repeat_kv(v.transpose(1, 2), h // kvh)               # 2  copy
//   s = torch.matmul(q, k.transpose(2, 3))                   # 3  q copy to a batch-strided layout,
//                                                            # 4  bmm, output in the dtype
//   s = s * scaling                                          # 5
//   s = tanh(s / cap) * cap                                  # 6-8 (softcap only, Gemma 2)
//   s = s + causal_mask                                      # 9  (mask built once per forward)
//   p = softmax(s, dim=-1, dtype=torch.float32).to(q.dtype)  # 10 softmax to fp32, 11 cast
//   o = torch.matmul(p, v)                                   # 12 bmm
//   o = o.transpose(1, 2).contiguous()                       # 13 copy back to bshd
//
// 10 launches in torch (13 with the soft-cap); this baseline launches 7: the three copies to
// bhsd, cuBLASLt S = Q K^T (batched over b * h, dtype output, fp32 accumulate), one masked-softmax
// kernel doing 5-11 in one pass (scale, soft-cap, mask, softmax in fp32, P written in the dtype,
// and the lse FlashAttention saves, which eager torch does not produce), cuBLASLt O = P V, and the
// copy back. So it is kinder than torch by 4 to 7 passes over the b * h * s^2 scores.
//
// Napkin math (b4 h32 s4096 d128 causal bf16): S and P are 2^31 elements each, 4 GiB apiece in
// bf16; the GEMMs compute the full square (no causal skipping): 2 * 2 * 2^31 * 128 = 1.1 PFLOP
// at ~600 TFLOP/s ~ 1.8 ms; the softmax reads S and writes P, 8 GiB at ~3000 GB/s ~ 2.9 ms; the
// copies ~0.3 ms. ~5 ms, against ~0.9 ms for FA2 at 320 TFLOP/s on the causal half.
//
// Workspace (declared): cuBLASLt's 32 MiB, Q, K, V and O in bhsd (K and V expanded to h heads),
// S and P (b * h * s^2 each, in the dtype). Cases needing more than 60 GiB are refused.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/common/block_reduce.cuh"
#include "kernels/common/cublaslt_matmul.cuh"
#include "kernels/common/eager_ops.cuh"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<repeat_kv_transpose_k>, ...).
namespace step {
struct repeat_kv_transpose_k;
struct repeat_kv_transpose_v;
struct transpose_q;
struct transpose_o_to_bshd;
}  // namespace step

namespace {

constexpr double kMaxWorkspaceGiB = 60;

std::size_t align_up(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

struct Buffers {
  std::size_t qt, kx, vx, scores, probs, ot, total;
};
Buffers buffers(const AttentionAxes& p, DType dtype) {
  const std::size_t e = elem_size(elem_type_of(dtype));
  const std::size_t bh = static_cast<std::size_t>(p.batch * p.heads);
  const std::size_t head = align_up(bh * static_cast<std::size_t>(p.seq * p.head_dim) * e);
  const std::size_t square = align_up(bh * static_cast<std::size_t>(p.seq) * static_cast<std::size_t>(p.seq) * e);
  Buffers b{};
  b.qt = kLtWorkspaceBytes;
  b.kx = b.qt + head;
  b.vx = b.kx + head;
  b.scores = b.vx + head;
  b.probs = b.scores + square;
  b.ot = b.probs + square;
  b.total = b.ot + head;
  return b;
}

std::optional<std::string> refuse(const Shape& s, DType dtype) {
  const double gib = static_cast<double>(buffers(AttentionAxes::of(s), dtype).total) / double(1 << 30);
  if (gib > kMaxWorkspaceGiB) {
    char text[96];  // no fmt in nvcc-compiled files
    std::snprintf(text, sizeof text, "materialised scores would need %.1f GiB (more than %.0f GiB)", gib,
                  kMaxWorkspaceGiB);
    return std::string(text);
  }
  return std::nullopt;
}

// One block per score row r = (b * h + head) * s + i: the logit of each key (scale, soft-cap,
// -inf where masked), the row's max and sum of exponentials in fp32, P = exp(l - max) / sum in
// the dtype, and lse[r] = max + log(sum) ([b, h, s] is the rows' order).
template <class T>
__global__ void masked_softmax(const T* __restrict__ scores, T* __restrict__ probs, float* __restrict__ lse,
                               AttentionParams p) {
  __shared__ float scratch[32];
  const std::int64_t r = blockIdx.x, i = r % p.seq;
  const T* row = scores + r * p.seq;
  T* out = probs + r * p.seq;
  const std::int64_t lo = p.first_key(i), hi = p.end_key(i);
  auto logit = [&](std::int64_t j) {
    const float s = to_float(row[j]) * p.scale;
    return p.softcap > 0 ? p.softcap * tanhf(s / p.softcap) : s;
  };
  float m = -INFINITY;
  for (std::int64_t j = lo + threadIdx.x; j < hi; j += blockDim.x) m = fmaxf(m, logit(j));
  m = block_max(m, scratch);
  float sum = 0;
  for (std::int64_t j = lo + threadIdx.x; j < hi; j += blockDim.x) sum += expf(logit(j) - m);
  sum = block_sum(sum, scratch);
  const float inv = 1.0f / sum;
  for (std::int64_t j = threadIdx.x; j < p.seq; j += blockDim.x)
    out[j] = from_float<T>(j >= lo && j < hi ? expf(logit(j) - m) * inv : 0.0f);
  if (threadIdx.x == 0) lse[r] = m + logf(sum);
}

struct Plans {
  std::unique_ptr<LtMatmul> scores, output;
};

template <class T>
void launch_typed(const LaunchArgs& a) {
  const auto axes = AttentionAxes::of(a.shape);
  const AttentionParams p = AttentionParams::of(axes);
  const std::int64_t h = p.heads, kvh = p.kv_heads, s = p.seq, d = p.head_dim, group = h / kvh;
  const std::int64_t n = p.batch * h * s * d;
  const T* q = a.tensor<const T>("q");
  const T* k = a.tensor<const T>("k");
  const T* v = a.tensor<const T>("v");
  T* o = a.tensor<T>("o");
  float* lse = a.tensor<float>("lse");
  const Buffers b = buffers(axes, a.dtype);
  char* ws = static_cast<char*>(a.workspace);
  T* qt = reinterpret_cast<T*>(ws + b.qt);
  T* kx = reinterpret_cast<T*>(ws + b.kx);
  T* vx = reinterpret_cast<T*>(ws + b.vx);
  T* scores = reinterpret_cast<T*>(ws + b.scores);
  T* probs = reinterpret_cast<T*>(ws + b.probs);
  T* ot = reinterpret_cast<T*>(ws + b.ot);
  eager_map<step::repeat_kv_transpose_k>(n, a.stream, [=] __device__(std::int64_t i) { kx[i] = k[bshd_index(i, s, h, d, kvh, group)]; });
  eager_map<step::repeat_kv_transpose_v>(n, a.stream, [=] __device__(std::int64_t i) { vx[i] = v[bshd_index(i, s, h, d, kvh, group)]; });
  eager_map<step::transpose_q>(n, a.stream, [=] __device__(std::int64_t i) { qt[i] = q[bshd_index(i, s, h, d, h, 1)]; });
  const Plans& plans = a.state_as<Plans>();
  plans.scores->run(kx, qt, scores, a.workspace, a.stream);
  masked_softmax<T><<<static_cast<unsigned>(p.batch * h * s), 256, 0, a.stream>>>(scores, probs, lse, p);
  plans.output->run(vx, probs, ot, a.workspace, a.stream);
  eager_map<step::transpose_o_to_bshd>(n, a.stream, [=] __device__(std::int64_t i) { o[bshd_index(i, s, h, d, h, 1)] = ot[i]; });
}

// Column-major per (b, h), batch stride between heads of the bhsd buffers:
//   S (row-major s x s) = Q K^T  is  S^T = K^T(op) Q: m = n = s, k = d, A = K (trans), B = Q.
//   O (row-major s x d) = P V    is  O^T = V^T P^T:   m = d, n = s, k = s, A = V, B = P.
std::shared_ptr<void> prepare(const LaunchArgs& a) {
  const auto p = AttentionAxes::of(a.shape);
  const std::int64_t s = p.seq, d = p.head_dim;
  const ElemType t = elem_type_of(a.dtype);
  auto plans = std::make_shared<Plans>();
  LtMatmulSpec qk;
  qk.trans_a = true;
  qk.m = s, qk.n = s, qk.k = d;
  qk.lda = d, qk.ldb = d, qk.ldd = s;
  qk.ab_type = t, qk.cd_type = t;
  qk.batch = static_cast<int>(p.batch * p.heads);
  qk.stride_a = s * d, qk.stride_b = s * d, qk.stride_d = s * s;
  plans->scores = std::make_unique<LtMatmul>(qk);
  LtMatmulSpec pv;
  pv.m = d, pv.n = s, pv.k = s;
  pv.lda = d, pv.ldb = s, pv.ldd = d;
  pv.ab_type = t, pv.cd_type = t;
  pv.batch = static_cast<int>(p.batch * p.heads);
  pv.stride_a = s * d, pv.stride_b = s * s, pv.stride_d = s * d;
  plans->output = std::make_unique<LtMatmul>(pv);
  return plans;
}

KWB_REGISTER_VARIANT(Variant{
    .op = "attention_fwd",
    .name = "baseline_eager_cublaslt",
    .role = Role::baseline,
    .description = "materialised scores as HF eager attention: repeat_kv copies, cuBLASLt Q K^T, one masked "
                   "softmax (scale, soft-cap, mask, lse), cuBLASLt P V, copy back to bshd",
    .launch = by_dtype_of<DType::fp16, DType::bf16>([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = refuse,
    .workspace_bytes = [](const Shape& s, DType dtype) { return buffers(AttentionAxes::of(s), dtype).total; },
    .uses = {"cuBLASLt"},
    .prepare = prepare,
});

}  // namespace
}  // namespace kwb
