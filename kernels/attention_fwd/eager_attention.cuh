// The materialised attention both eager baselines run (attention_fwd's and attention_varlen_fwd's,
// which pads its packed sequences to the longest first): the workspace of bhsd copies and the
// b * h * s^2 scores and probabilities, the cuBLASLt plans of S = Q K^T and O = P V batched over
// (batch, head), and the masked softmax between them.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/common/align_up.hpp"
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

namespace eager_attention {

constexpr double kMaxWorkspaceGiB = 60;

// Byte offsets into the workspace (cuBLASLt's share first); `extra` bytes after ot for a caller's
// own buffer (the varlen baseline's padded lse).
struct Buffers {
  std::size_t qt, kx, vx, scores, probs, ot, extra, total;
};
inline Buffers buffers(const AttentionAxes& p, DType dtype, std::size_t extra_bytes = 0) {
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
  b.extra = b.ot + head;
  b.total = b.extra + align_up(extra_bytes);
  return b;
}

// The workspace's buffers as typed pointers.
template <class T>
struct Views {
  T *qt, *kx, *vx, *scores, *probs, *ot;
};
template <class T>
Views<T> views(void* workspace, const Buffers& b) {
  char* ws = static_cast<char*>(workspace);
  return {reinterpret_cast<T*>(ws + b.qt),     reinterpret_cast<T*>(ws + b.kx),    reinterpret_cast<T*>(ws + b.vx),
          reinterpret_cast<T*>(ws + b.scores), reinterpret_cast<T*>(ws + b.probs), reinterpret_cast<T*>(ws + b.ot)};
}

// A materialised baseline's refusal of a workspace past kMaxWorkspaceGiB: "<what> would need
// X GiB (more than 60 GiB)", what being the buffers that grow (its scores, a gathered cache).
inline std::optional<std::string> refuse_workspace(std::size_t bytes, const char* what) {
  const double gib = static_cast<double>(bytes) / double(1 << 30);
  if (gib <= kMaxWorkspaceGiB) return std::nullopt;
  char text[160];  // no fmt in nvcc-compiled files
  std::snprintf(text, sizeof text, "%s would need %.1f GiB (more than %.0f GiB)", what, gib, kMaxWorkspaceGiB);
  return std::string(text);
}

inline std::optional<std::string> refuse_large(const Buffers& b) {
  return refuse_workspace(b.total, "materialised scores");
}

// One block per score row r = (b * h + head) * s + i of [b, h, s, s] scores: the logit of each key
// (scale, soft-cap, -inf where masked), the row's max and sum of exponentials in fp32, P = exp(l -
// max) / sum in the dtype, and lse[r] = max + log(sum) ([b, h, s] is the rows' order). With packed
// sequences (p.cu_seqlens) s is the longest and sequence b's own length masks the keys past it; its
// rows past that length are padding: P 0, lse left alone. With a block mask (p.block_mask) a key
// also needs its block kept; a row that keeps none sees no key: P 0 and lse -inf (FlexAttention's
// convention, where an eager softmax over only -inf would give NaN).
template <class T>
__global__ void masked_softmax(const T* __restrict__ scores, T* __restrict__ probs, float* __restrict__ lse,
                               AttentionParams p) {
  __shared__ float scratch[32];
  const std::int64_t padded = p.seq;
  const std::int64_t r = blockIdx.x, i = r % padded;
  const T* row = scores + r * padded;
  T* out = probs + r * padded;
  const std::int64_t batch = r / (padded * p.heads), head = (r / padded) % p.heads;
  p.enter_sequence(batch);  // packed: p.seq becomes this sequence's length
  if (i >= p.seq) {
    for (std::int64_t j = threadIdx.x; j < padded; j += blockDim.x) out[j] = from_float<T>(0.0f);
    return;
  }
  const std::int64_t lo = p.first_key(i), hi = p.end_key(i);
  const std::uint8_t* kept = p.block_mask ? p.block_mask_row(batch, head, i / p.block) : nullptr;
  auto sees = [&](std::int64_t j) { return j >= lo && j < hi && (!kept || kept[j / p.block]); };
  auto logit = [&](std::int64_t j) {
    const float s = to_float(row[j]) * p.scale;
    return p.softcap > 0 ? p.softcap * tanhf(s / p.softcap) : s;
  };
  float m = -INFINITY;
  for (std::int64_t j = lo + threadIdx.x; j < hi; j += blockDim.x)
    if (sees(j)) m = fmaxf(m, logit(j));
  m = block_max(m, scratch);
  float sum = 0;
  for (std::int64_t j = lo + threadIdx.x; j < hi; j += blockDim.x)
    if (sees(j)) sum += expf(logit(j) - m);
  sum = block_sum(sum, scratch);
  const float inv = sum > 0 ? 1.0f / sum : 0.0f;
  for (std::int64_t j = threadIdx.x; j < padded; j += blockDim.x)
    out[j] = from_float<T>(sees(j) ? expf(logit(j) - m) * inv : 0.0f);
  if (threadIdx.x == 0) lse[r] = sum > 0 ? m + logf(sum) : -INFINITY;
}

struct Plans {
  std::unique_ptr<LtMatmul> scores, output;
};

// The two products over `batch` (batch, head) or (batch, kv head) pairs, each of `rows` queries
// against `keys` keys, from row-major bhsd-like buffers, column-major as cuBLASLt sees them:
//   S (rows x keys) = Q K^T  is  S^T = K^T(op) Q: m = keys, n = rows, k = d, A = K (trans), B = Q.
//   O (rows x d)    = P V    is  O^T = V^T P^T:   m = d, n = rows, k = keys, A = V, B = P.
// Self-attention has rows = keys = s; paged decoding a kv head's group x q_len queries.
inline std::shared_ptr<void> prepare_plans(std::int64_t batch, std::int64_t rows, std::int64_t keys, std::int64_t d,
                                           DType dtype) {
  const ElemType t = elem_type_of(dtype);
  auto plans = std::make_shared<Plans>();
  LtMatmulSpec qk;
  qk.trans_a = true;
  qk.m = keys, qk.n = rows, qk.k = d;
  qk.lda = d, qk.ldb = d, qk.ldd = keys;
  qk.ab_type = t, qk.cd_type = t;
  qk.batch = static_cast<int>(batch);
  qk.stride_a = keys * d, qk.stride_b = rows * d, qk.stride_d = rows * keys;
  plans->scores = std::make_unique<LtMatmul>(qk);
  LtMatmulSpec pv;
  pv.m = d, pv.n = rows, pv.k = keys;
  pv.lda = d, pv.ldb = keys, pv.ldd = d;
  pv.ab_type = t, pv.cd_type = t;
  pv.batch = static_cast<int>(batch);
  pv.stride_a = keys * d, pv.stride_b = rows * keys, pv.stride_d = rows * d;
  plans->output = std::make_unique<LtMatmul>(pv);
  return plans;
}

// Self-attention over [batch, heads, seq, d] buffers.
inline std::shared_ptr<void> prepare_plans(const AttentionAxes& p, DType dtype) {
  return prepare_plans(p.batch * p.heads, p.seq, p.seq, p.head_dim, dtype);
}

// The materialised self-attention of bshd q, k, v into o and lse, as attention_fwd's baseline
// describes it (baseline_eager_cublaslt.cu): three copies to bhsd (K and V repeated to every query
// head), cuBLASLt S = Q K^T, masked_softmax under p's mask (and its block mask, when set), cuBLASLt
// O = P V, the copy back. The case's state is prepare_plans(axes)'s; its workspace buffers(axes).
template <class T>
void self_attention(const LaunchArgs& a, const AttentionAxes& axes, const AttentionParams& p) {
  const std::int64_t h = p.heads, kvh = p.kv_heads, s = p.seq, d = p.head_dim, group = h / kvh;
  const std::int64_t n = p.batch * h * s * d;
  const T* q = a.tensor<const T>("q");
  const T* k = a.tensor<const T>("k");
  const T* v = a.tensor<const T>("v");
  T* o = a.tensor<T>("o");
  float* lse = a.tensor<float>("lse");
  const Views<T> w = views<T>(a.workspace, buffers(axes, a.dtype));
  T *qt = w.qt, *kx = w.kx, *vx = w.vx, *scores = w.scores, *probs = w.probs, *ot = w.ot;
  eager_map<step::repeat_kv_transpose_k>(n, a.stream, [=] __device__(std::int64_t i) { kx[i] = k[bshd_index(i, s, h, d, kvh, group)]; });
  eager_map<step::repeat_kv_transpose_v>(n, a.stream, [=] __device__(std::int64_t i) { vx[i] = v[bshd_index(i, s, h, d, kvh, group)]; });
  eager_map<step::transpose_q>(n, a.stream, [=] __device__(std::int64_t i) { qt[i] = q[bshd_index(i, s, h, d, h, 1)]; });
  const auto& plans = a.state_as<Plans>();
  plans.scores->run(kx, qt, scores, a.workspace, a.stream);
  masked_softmax<T><<<static_cast<unsigned>(p.batch * h * s), 256, 0, a.stream>>>(scores, probs, lse, p);
  plans.output->run(vx, probs, ot, a.workspace, a.stream);
  eager_map<step::transpose_o_to_bshd>(n, a.stream, [=] __device__(std::int64_t i) { o[bshd_index(i, s, h, d, h, 1)] = ot[i]; });
}

}  // namespace eager_attention
}  // namespace kwb
