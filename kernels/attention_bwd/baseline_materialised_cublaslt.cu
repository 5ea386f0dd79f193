// attention_bwd baseline_materialised_cublaslt: FlashAttention's backward with every score-sized
// intermediate materialised, run eagerly on bshd inputs, one launch per framework op. It takes the
// op's interface as FlashAttention does (o and lse from the forward, no saved P) and rebuilds P
// from recomputed logits, as an eager framework would write that backward by hand:
//
//   q, do = q.transpose(1, 2), do.transpose(1, 2)           # 1, 2  copies to [b, h, s, d]
//   k = repeat_kv(k.transpose(1, 2), h // kvh)              # 3     expand copy to h heads
//   v = repeat_kv(v.transpose(1, 2), h // kvh)              # 4
//   s = torch.matmul(q, k.transpose(2, 3))                  # 5  bmm, fp32 out (logits unrounded)
//   dp = torch.matmul(do, v.transpose(2, 3))                # 6  bmm, fp32 out
//   D = (do.float() * o.float()).sum(-1)                    # 7  row reduction, o read in bshd
//   l = cap * tanh(s * scale / cap)                         # 8  one kernel per score row: P in
//   p = exp(l - lse).masked_fill(~visible, 0)               #    the dtype, and dS from P in fp32
//   ds = p * (dp - D) * (1 - tanh^2(s * scale / cap))       #    (0 where masked) in the dtype
//   dv = torch.matmul(p.transpose(2, 3), do)                # 9   bmm, fp32 out, per query head
//   dk = torch.matmul(ds.transpose(2, 3), q)                # 10  bmm, fp32 out
//   dq = torch.matmul(ds, k)                                # 11  bmm, fp32 out
//   dq = (dq * scale).transpose(1, 2)                       # 12  to bshd in the dtype
//   dk = (dk * scale).view(b, kvh, h // kvh, s, d).sum(2)   # 13  repeat_kv's backward, to bshd
//   dv = dv.view(b, kvh, h // kvh, s, d).sum(2)             # 14
//
// 14 launches (torch's autograd of the eager forward saves P and runs more, each a pass over the
// scores); step 8 folds scale, soft-cap, mask, exp and the softmax's backward into one pass, so
// this is the kind eager baseline: what fusing buys beyond it is not doing the score passes at all.
//
// Napkin math (b4 h32 s4096 d128 causal bf16): S, dP, P and dS are 2^31 elements each: S and dP
// 8 GiB apiece in fp32, P and dS 4 GiB apiece in bf16. The five GEMMs compute the full square
// (no causal skipping): 5 * 2 * 2^31 * 128 = 2.7 TFLOP, 4.6 ms at ~600 TFLOP/s, but they are
// bound by the scores' traffic: writing S and dP (16 GiB) and reading P once and dS twice
// (12 GiB); step 8 reads the visible half of S and dP (8 GiB) and writes P and dS (8 GiB). 44 GiB
// at ~3000 GB/s ~ 16 ms, plus ~1 ms of copies, D and the bshd outputs: ~17 ms, against ~4.2 ms for
// a flash backward doing the causal half (1.4 TFLOP) at FA2's published ~330 TFLOP/s, with no
// score traffic.
//
// Workspace (declared): cuBLASLt's 32 MiB; Q, dO, K and V in bhsd in the dtype (K and V expanded
// to h heads); S and dP (b * h * s^2 each, fp32); D (b * h * s, fp32); P and dS (b * h * s^2
// each, in the dtype); dQ, dK and dV per query head in bhsd, fp32. 25.3 GiB at the shape above.
// Cases needing more than 60 GiB are refused.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/eager_attention.cuh"
#include "kernels/common/cublaslt_matmul.cuh"
#include "kernels/common/eager_ops.cuh"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<transpose_q>, ...).
namespace step {
struct transpose_q;
struct transpose_do;
struct repeat_kv_transpose_k;
struct repeat_kv_transpose_v;
struct rowsum_do_times_o;
struct scale_dq_to_bshd;
struct sum_kv_group_dk_to_bshd;
struct sum_kv_group_dv_to_bshd;
}  // namespace step

namespace {

using eager_attention::align_up;

// Byte offsets into the workspace; cuBLASLt's share comes first.
struct Buffers {
  std::size_t qt, dot, kx, vx;   // [b, h, s, d] in the dtype
  std::size_t scores, dprobs;    // [b, h, s, s] fp32
  std::size_t row_d;             // [b, h, s] fp32: D
  std::size_t probs, dscores;    // [b, h, s, s] in the dtype
  std::size_t dq_h, dk_h, dv_h;  // [b, h, s, d] fp32, per query head
  std::size_t total;
};
Buffers buffers(const AttentionAxes& p, DType dtype) {
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
  b.total = b.dv_h + head_f32;
  return b;
}

std::optional<std::string> refuse(const Shape& s, DType dtype) {
  return eager_attention::refuse_workspace(buffers(AttentionAxes::of(s), dtype).total,
                                           "materialised scores and their gradients");
}

// One block per score row r = (b * h + head) * s + i ([b, h, s] is lse's and D's order): for each
// key j, P = exp(l - lse) and dS = P (dP - D) l'(s), 0 where i does not see j. dS uses P in fp32,
// before P is rounded to the dtype; only the visible keys' S and dP are read.
template <class T>
__global__ void probs_and_score_grads(const float* __restrict__ scores,
                                      const float* __restrict__ dprobs,
                                      const float* __restrict__ lse,
                                      const float* __restrict__ row_d, T* __restrict__ probs,
                                      T* __restrict__ dscores, AttentionParams p) {
  const std::int64_t r = blockIdx.x, i = r % p.seq;
  const std::int64_t lo = p.first_key(i), hi = p.end_key(i);
  const float* s_row = scores + r * p.seq;
  const float* dp_row = dprobs + r * p.seq;
  T* p_row = probs + r * p.seq;
  T* ds_row = dscores + r * p.seq;
  const float row_lse = lse[r], big_d = row_d[r];
  for (std::int64_t j = threadIdx.x; j < p.seq; j += blockDim.x) {
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
__device__ __forceinline__ std::int64_t bhsd_index(std::int64_t i, std::int64_t s, std::int64_t h,
                                                   std::int64_t d, std::int64_t out_heads,
                                                   std::int64_t group, std::int64_t g) {
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

template <class T>
void launch_typed(const LaunchArgs& a) {
  const auto axes = AttentionAxes::of(a.shape);
  const AttentionParams p = AttentionParams::of(axes);
  const std::int64_t h = p.heads, kvh = p.kv_heads, s = p.seq, d = p.head_dim, group = h / kvh;
  const std::int64_t n = p.batch * h * s * d, n_kv = p.batch * kvh * s * d;
  const float scale = p.scale;
  const T* q = a.tensor<const T>("q");
  const T* k = a.tensor<const T>("k");
  const T* v = a.tensor<const T>("v");
  const T* o = a.tensor<const T>("o");
  const float* lse = a.tensor<const float>("lse");
  const T* dout = a.tensor<const T>("do");
  T* dq = a.tensor<T>("dq");
  T* dk = a.tensor<T>("dk");
  T* dv = a.tensor<T>("dv");
  const Buffers b = buffers(axes, a.dtype);
  char* ws = static_cast<char*>(a.workspace);
  T* qt = reinterpret_cast<T*>(ws + b.qt);
  T* dot = reinterpret_cast<T*>(ws + b.dot);
  T* kx = reinterpret_cast<T*>(ws + b.kx);
  T* vx = reinterpret_cast<T*>(ws + b.vx);
  float* scores = reinterpret_cast<float*>(ws + b.scores);
  float* dprobs = reinterpret_cast<float*>(ws + b.dprobs);
  float* row_d = reinterpret_cast<float*>(ws + b.row_d);
  T* probs = reinterpret_cast<T*>(ws + b.probs);
  T* dscores = reinterpret_cast<T*>(ws + b.dscores);
  float* dq_h = reinterpret_cast<float*>(ws + b.dq_h);
  float* dk_h = reinterpret_cast<float*>(ws + b.dk_h);
  float* dv_h = reinterpret_cast<float*>(ws + b.dv_h);
  const Plans& plans = a.state_as<Plans>();

  // 1-4: the operands in bhsd, K and V expanded to the h query heads.
  eager_map<step::transpose_q>(
      n, a.stream, [=] __device__(std::int64_t i) { qt[i] = q[bshd_index(i, s, h, d, h, 1)]; });
  eager_map<step::transpose_do>(
      n, a.stream, [=] __device__(std::int64_t i) { dot[i] = dout[bshd_index(i, s, h, d, h, 1)]; });
  eager_map<step::repeat_kv_transpose_k>(n, a.stream, [=] __device__(std::int64_t i) {
    kx[i] = k[bshd_index(i, s, h, d, kvh, group)];
  });
  eager_map<step::repeat_kv_transpose_v>(n, a.stream, [=] __device__(std::int64_t i) {
    vx[i] = v[bshd_index(i, s, h, d, kvh, group)];
  });
  // 5, 6: the logits' scores and dP, fp32.
  plans.x_yt->run(kx, qt, scores, a.workspace, a.stream);
  plans.x_yt->run(vx, dot, dprobs, a.workspace, a.stream);
  // 7: D per row r = (b * h + head) * s + i, from dO and O in bshd.
  eager_row_reduce<step::rowsum_do_times_o>(
      row_d, p.batch * h * s, d, 1.0f, a.stream, [=] __device__(std::int64_t r, std::int64_t c) {
        const std::int64_t i = r % s, hh = (r / s) % h, bb = r / (s * h);
        const std::int64_t at = ((bb * s + i) * h + hh) * d + c;
        return to_float(dout[at]) * to_float(o[at]);
      });
  // 8: P and dS in the dtype.
  probs_and_score_grads<T><<<static_cast<unsigned>(p.batch * h * s), 256, 0, a.stream>>>(
      scores, dprobs, lse, row_d, probs, dscores, p);
  // 9-11: per query head, fp32.
  plans.zt_x->run(dot, probs, dv_h, a.workspace, a.stream);
  plans.zt_x->run(qt, dscores, dk_h, a.workspace, a.stream);
  plans.z_x->run(kx, dscores, dq_h, a.workspace, a.stream);
  // 12-14: scale, repeat_kv's backward (the sum over each kv head's group), back to bshd.
  eager_map<step::scale_dq_to_bshd>(n, a.stream, [=] __device__(std::int64_t i) {
    dq[i] = from_float<T>(scale * dq_h[bhsd_index(i, s, h, d, h, 1, 0)]);
  });
  eager_map<step::sum_kv_group_dk_to_bshd>(n_kv, a.stream, [=] __device__(std::int64_t i) {
    float sum = 0;
    for (std::int64_t g = 0; g < group; ++g) sum += dk_h[bhsd_index(i, s, h, d, kvh, group, g)];
    dk[i] = from_float<T>(scale * sum);
  });
  eager_map<step::sum_kv_group_dv_to_bshd>(n_kv, a.stream, [=] __device__(std::int64_t i) {
    float sum = 0;
    for (std::int64_t g = 0; g < group; ++g) sum += dv_h[bhsd_index(i, s, h, d, kvh, group, g)];
    dv[i] = from_float<T>(sum);
  });
}

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
std::shared_ptr<void> prepare(const LaunchArgs& a) {
  const auto p = AttentionAxes::of(a.shape);
  const std::int64_t s = p.seq, d = p.head_dim;
  const ElemType t = elem_type_of(a.dtype);
  auto per_head = [&](bool trans_a, bool trans_b, std::int64_t m, std::int64_t k, std::int64_t lda,
                      std::int64_t ldb, std::int64_t stride_b) {
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
  plans->x_yt = per_head(/*trans_a=*/true, /*trans_b=*/false, /*m=*/s, /*k=*/d, /*lda=*/d,
                         /*ldb=*/d, /*stride_b=*/s * d);
  plans->zt_x = per_head(/*trans_a=*/false, /*trans_b=*/true, /*m=*/d, /*k=*/s, /*lda=*/d,
                         /*ldb=*/s, /*stride_b=*/s * s);
  plans->z_x = per_head(/*trans_a=*/false, /*trans_b=*/false, /*m=*/d, /*k=*/s, /*lda=*/d,
                        /*ldb=*/s, /*stride_b=*/s * s);
  return plans;
}

KWB_REGISTER_VARIANT(Variant{
    .op = "attention_bwd",
    .name = "baseline_materialised_cublaslt",
    .role = Role::baseline,
    .description = "materialised backward: repeat_kv copies, cuBLASLt S = Q K^T and dP = dO V^T in "
                   "fp32, D = rowsum(dO * O), one row kernel for P and dS, cuBLASLt P^T dO, dS^T Q "
                   "and dS K per query head, group sums back to bshd",
    .launch = by_dtype_of<DType::fp16, DType::bf16>([]<class T>(const LaunchArgs& a) {
      launch_typed<T>(a);
    }),
    .refuse = refuse,
    .workspace_bytes = [](const Shape& s,
                          DType dtype) { return buffers(AttentionAxes::of(s), dtype).total; },
    .uses = {"cuBLASLt"},
    .prepare = prepare,
});

}  // namespace
}  // namespace kwb
