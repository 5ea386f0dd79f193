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
// The workspace, the plans and the row kernel of step 8 are materialised_bwd.cuh's, shared with
// attention_varlen_bwd's padded baseline.
//
// Workspace (declared): cuBLASLt's 32 MiB; Q, dO, K and V in bhsd in the dtype (K and V expanded
// to h heads); S and dP (b * h * s^2 each, fp32); D (b * h * s, fp32); P and dS (b * h * s^2
// each, in the dtype); dQ, dK and dV per query head in bhsd, fp32. 25.3 GiB at the shape above.
// Cases needing more than 60 GiB are refused.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <optional>
#include <string>

#include "kernels/attention_bwd/materialised_bwd.cuh"
#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/eager_attention.cuh"
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

using materialised_bwd::bhsd_index;

std::optional<std::string> refuse(const Shape& s, DType dtype) {
  return eager_attention::refuse_workspace(materialised_bwd::buffers(AttentionAxes::of(s), dtype).total,
                                           "materialised scores and their gradients");
}

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
  const materialised_bwd::Views<T> w = materialised_bwd::views<T>(a.workspace, materialised_bwd::buffers(axes, a.dtype));
  T *qt = w.qt, *dot = w.dot, *kx = w.kx, *vx = w.vx;
  float *row_d = w.row_d, *dq_h = w.dq_h, *dk_h = w.dk_h, *dv_h = w.dv_h;
  const auto& plans = a.state_as<materialised_bwd::Plans>();

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
  materialised_bwd::scores_and_dprobs(plans, w, a.workspace, a.stream);
  // 7: D per row r = (b * h + head) * s + i, from dO and O in bshd.
  eager_row_reduce<step::rowsum_do_times_o>(
      row_d, p.batch * h * s, d, 1.0f, a.stream, [=] __device__(std::int64_t r, std::int64_t c) {
        const std::int64_t i = r % s, hh = (r / s) % h, bb = r / (s * h);
        const std::int64_t at = ((bb * s + i) * h + hh) * d + c;
        return to_float(dout[at]) * to_float(o[at]);
      });
  // 8: P and dS in the dtype; 9-11: dV, dK and dQ per query head, fp32.
  materialised_bwd::score_grads_and_products(plans, w, lse, p, a.workspace, a.stream);
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
                          DType dtype) { return materialised_bwd::buffers(AttentionAxes::of(s), dtype).total; },
    .uses = {"cuBLASLt"},
    .prepare = [](const LaunchArgs& a) {
      return materialised_bwd::prepare_plans(AttentionAxes::of(a.shape), a.dtype);
    },
});

}  // namespace
}  // namespace kwb
