// The materialised backward both eager baselines run (attention_bwd's baseline_materialised_cublaslt
// and attention_varlen_bwd's, which pads its packed sequences to the longest first): the workspace
// of bhsd operands, b * h * s^2 scores, dP, P and dS and per-query-head gradients, the cuBLASLt
// plans of the five products batched over (batch, head), and the row kernel between them that
// turns S and dP into P and dS. baseline_materialised_cublaslt.cu says what each step is and its
// napkin math.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <memory>

#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/eager_attention.cuh"  // refuse_workspace
#include "kernels/common/align_up.hpp"
#include "kernels/common/cublaslt_matmul.cuh"

namespace kwb {
namespace materialised_bwd {

// Byte offsets into the workspace; cuBLASLt's share comes first, `extra` bytes last for a caller's
// own buffer (the padded baseline's padded lse).
struct Buffers {
  std::size_t qt, dot, kx, vx;   // [b, h, s, d] in the dtype
  std::size_t scores, dprobs;    // [b, h, s, s] fp32
  std::size_t row_d;             // [b, h, s] fp32: D
  std::size_t probs, dscores;    // [b, h, s, s] in the dtype
  std::size_t dq_h, dk_h, dv_h;  // [b, h, s, d] fp32, per query head
  std::size_t extra;
  std::size_t total;
};
inline Buffers buffers(const AttentionAxes& p, DType dtype, std::size_t extra_bytes = 0) {
  const std::size_t e = elem_size(elem_type_of(dtype)), f = sizeof(float);
  const std::size_t bh = static_cast<std::size_t>(p.batch * p.heads);
  const std::size_t s = static_cast<std::size_t>(p.seq), d = static_cast<std::size_t>(p.head_dim);
  const std::size_t head = align_up(bh * s * d * e), head_f32 = align_up(bh * s * d * f);
  const std::size_t square = align_up(bh * s * s * e), square_f32 = align_up(bh * s * s * f);
  Buffers b{};
  b.qt = kLtWorkspaceBytes;
  b.dot = b.qt + head;
  b.kx = b.dot + head;
  b.vx = b.kx + head;
  b.scores = b.vx + head;
  b.dprobs = b.scores + square_f32;
  b.row_d = b.dprobs + square_f32;
  b.probs = b.row_d + align_up(bh * s * f);
  b.dscores = b.probs + square;
  b.dq_h = b.dscores + square;
  b.dk_h = b.dq_h + head_f32;
  b.dv_h = b.dk_h + head_f32;
  b.extra = b.dv_h + head_f32;
  b.total = b.extra + align_up(extra_bytes);
  return b;
}

// The workspace's buffers as typed pointers.
template <class T>
struct Views {
  T *qt, *dot, *kx, *vx;
  float *scores, *dprobs, *row_d;
  T *probs, *dscores;
  float *dq_h, *dk_h, *dv_h;
};
template <class T>
Views<T> views(void* workspace, const Buffers& b) {
  char* ws = static_cast<char*>(workspace);
  return {reinterpret_cast<T*>(ws + b.qt),         reinterpret_cast<T*>(ws + b.dot),
          reinterpret_cast<T*>(ws + b.kx),         reinterpret_cast<T*>(ws + b.vx),
          reinterpret_cast<float*>(ws + b.scores), reinterpret_cast<float*>(ws + b.dprobs),
          reinterpret_cast<float*>(ws + b.row_d),  reinterpret_cast<T*>(ws + b.probs),
          reinterpret_cast<T*>(ws + b.dscores),    reinterpret_cast<float*>(ws + b.dq_h),
          reinterpret_cast<float*>(ws + b.dk_h),   reinterpret_cast<float*>(ws + b.dv_h)};
}

// One block per score row r = (b * h + head) * s + i ([b, h, s] is lse's and D's order): for each
// key j, P = exp(l - lse) and dS = P (dP - D) l'(s), 0 where i does not see j. dS uses P in fp32,
// before P is rounded to the dtype; only the visible keys' S and dP are read.
// kPacked (sequences padded to the longest, p.cu_seqlens set): s is the longest, sequence b's own
// length masks the keys past it, and its rows past that length are padding: P and dS 0 (so padded
// queries add nothing to dK and dV, padded keys nothing to dQ), their lse and D never read. A
// template parameter so that the dense baseline's kernel stays what it was.
template <class T, bool kPacked = false>
__global__ void probs_and_score_grads(const float* __restrict__ scores, const float* __restrict__ dprobs,
                                      const float* __restrict__ lse, const float* __restrict__ row_d,
                                      T* __restrict__ probs, T* __restrict__ dscores, AttentionParams p) {
  const std::int64_t padded = p.seq;
  const std::int64_t r = blockIdx.x, i = r % padded;
  const float* s_row = scores + r * padded;
  const float* dp_row = dprobs + r * padded;
  T* p_row = probs + r * padded;
  T* ds_row = dscores + r * padded;
  if constexpr (kPacked) {
    p.enter_sequence(r / (padded * p.heads));  // p.seq becomes this sequence's length
    if (i >= p.seq) {
      for (std::int64_t j = threadIdx.x; j < padded; j += blockDim.x) p_row[j] = ds_row[j] = from_float<T>(0.0f);
      return;
    }
  }
  const std::int64_t lo = p.first_key(i), hi = p.end_key(i);
  const float row_lse = lse[r], big_d = row_d[r];
  for (std::int64_t j = threadIdx.x; j < padded; j += blockDim.x) {
    float prob = 0, ds = 0;
    if (j >= lo && j < hi) {
      const float score = s_row[j] * p.scale;
      float logit = score, slope = 1;  // slope: l'(s)
      if (p.softcap > 0) {
        const float t = tanhf(score / p.softcap);
        logit = p.softcap * t;
        slope = 1 - t * t;
      }
      prob = expf(logit - row_lse);
      ds = prob * (dp_row[j] - big_d) * slope;
    }
    p_row[j] = from_float<T>(prob);
    ds_row[j] = from_float<T>(ds);
  }
}

// Element i of a [b, s, out_heads, d] tensor, read from query head (out head * group + g) of a
// [b, h, s, d] one: a plain transpose (group 1, g 0) or term g of repeat_kv's backward sum.
__device__ __forceinline__ std::int64_t bhsd_index(std::int64_t i, std::int64_t s, std::int64_t h, std::int64_t d,
                                                   std::int64_t out_heads, std::int64_t group, std::int64_t g) {
  const std::int64_t e = i % d, oh = (i / d) % out_heads, t = (i / (d * out_heads)) % s,
                     bb = i / (d * out_heads * s);
  return ((bb * h + oh * group + g) * s + t) * d + e;
}

// Three GEMM layouts serve the five products (each plan is launched with its operands' pointers).
struct Plans {
  std::unique_ptr<LtMatmul> x_yt;  // X Y^T: S = Q K^T, dP = dO V^T
  std::unique_ptr<LtMatmul> zt_x;  // Z^T X: dV = P^T dO, dK = dS^T Q
  std::unique_ptr<LtMatmul> z_x;   // Z X:   dQ = dS K
};

// Column-major per (b, h), batch stride between heads of the bhsd buffers. A row-major [s, d]
// head X is the column-major d x s matrix X^T (ld d); a row-major [s, s] score matrix Z is the
// column-major Z^T (ld s). Every output is fp32 (cd_type), the operands in the dtype.
//   S (row-major s x s) = Q K^T   is  S^T = K Q^T:     m = n = s, k = d, A = K (trans, lda d),
//                                     B = Q^T (ldb d), D ld s.   dP = dO V^T: A = V, B = dO.
//   dV (row-major s x d) = P^T dO is  dV^T = dO^T P:   m = d, n = s, k = s, A = dO^T (lda d),
//                                     B = P (stored P^T: trans, ldb s), D ld d.
//                                     dK = dS^T Q: A = Q^T, B = dS.
//   dQ (row-major s x d) = dS K   is  dQ^T = K^T dS^T: m = d, n = s, k = s, A = K^T (lda d),
//                                     B = dS^T (ldb s), D ld d.
inline std::shared_ptr<void> prepare_plans(const AttentionAxes& p, DType dtype) {
  const std::int64_t s = p.seq, d = p.head_dim;
  const ElemType t = elem_type_of(dtype);
  auto per_head = [&](bool trans_a, bool trans_b, std::int64_t m, std::int64_t k, std::int64_t lda, std::int64_t ldb,
                      std::int64_t stride_b) {
    LtMatmulSpec spec;
    spec.trans_a = trans_a, spec.trans_b = trans_b;
    spec.m = m, spec.n = s, spec.k = k;
    spec.lda = lda, spec.ldb = ldb, spec.ldd = m;
    spec.ab_type = t, spec.cd_type = ElemType::fp32;
    spec.batch = static_cast<int>(p.batch * p.heads);
    spec.stride_a = s * d, spec.stride_b = stride_b, spec.stride_d = m * s;
    return std::make_unique<LtMatmul>(spec);
  };
  auto plans = std::make_shared<Plans>();
  plans->x_yt = per_head(/*trans_a=*/true, /*trans_b=*/false, /*m=*/s, /*k=*/d, /*lda=*/d, /*ldb=*/d,
                         /*stride_b=*/s * d);
  plans->zt_x = per_head(/*trans_a=*/false, /*trans_b=*/true, /*m=*/d, /*k=*/s, /*lda=*/d, /*ldb=*/s,
                         /*stride_b=*/s * s);
  plans->z_x = per_head(/*trans_a=*/false, /*trans_b=*/false, /*m=*/d, /*k=*/s, /*lda=*/d, /*ldb=*/s,
                        /*stride_b=*/s * s);
  return plans;
}

// Steps 5 and 6 of the baseline: S = Q K^T and dP = dO V^T in fp32, from the bhsd operands.
template <class T>
void scores_and_dprobs(const Plans& plans, const Views<T>& w, void* workspace, cudaStream_t stream) {
  plans.x_yt->run(w.kx, w.qt, w.scores, workspace, stream);
  plans.x_yt->run(w.vx, w.dot, w.dprobs, workspace, stream);
}

// Steps 8 to 11: P and dS (the row kernel, under p's mask), then dV = P^T dO, dK = dS^T Q and
// dQ = dS K per query head in fp32. lse and D are [b, h, s].
template <class T, bool kPacked = false>
void score_grads_and_products(const Plans& plans, const Views<T>& w, const float* lse, const AttentionParams& p,
                              void* workspace, cudaStream_t stream) {
  probs_and_score_grads<T, kPacked><<<static_cast<unsigned>(p.batch * p.heads * p.seq), 256, 0, stream>>>(
      w.scores, w.dprobs, lse, w.row_d, w.probs, w.dscores, p);
  plans.zt_x->run(w.dot, w.probs, w.dv_h, workspace, stream);
  plans.zt_x->run(w.qt, w.dscores, w.dk_h, workspace, stream);
  plans.z_x->run(w.kx, w.dscores, w.dq_h, workspace, stream);
}

}  // namespace materialised_bwd
}  // namespace kwb
