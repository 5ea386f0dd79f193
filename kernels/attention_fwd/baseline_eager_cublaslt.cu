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
#include "kernels/attention_fwd/eager_attention.cuh"
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

std::optional<std::string> refuse(const Shape& s, DType dtype) {
  return eager_attention::refuse_large(eager_attention::buffers(AttentionAxes::of(s), dtype));
}

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
  const eager_attention::Buffers b = eager_attention::buffers(axes, a.dtype);
  const eager_attention::Views<T> w = eager_attention::views<T>(a.workspace, b);
  T *qt = w.qt, *kx = w.kx, *vx = w.vx, *scores = w.scores, *probs = w.probs, *ot = w.ot;
  eager_map<step::repeat_kv_transpose_k>(n, a.stream, [=] __device__(std::int64_t i) { kx[i] = k[bshd_index(i, s, h, d, kvh, group)]; });
  eager_map<step::repeat_kv_transpose_v>(n, a.stream, [=] __device__(std::int64_t i) { vx[i] = v[bshd_index(i, s, h, d, kvh, group)]; });
  eager_map<step::transpose_q>(n, a.stream, [=] __device__(std::int64_t i) { qt[i] = q[bshd_index(i, s, h, d, h, 1)]; });
  const auto& plans = a.state_as<eager_attention::Plans>();
  plans.scores->run(kx, qt, scores, a.workspace, a.stream);
  eager_attention::masked_softmax<T><<<static_cast<unsigned>(p.batch * h * s), 256, 0, a.stream>>>(scores, probs, lse, p);
  plans.output->run(vx, probs, ot, a.workspace, a.stream);
  eager_map<step::transpose_o_to_bshd>(n, a.stream, [=] __device__(std::int64_t i) { o[bshd_index(i, s, h, d, h, 1)] = ot[i]; });
}

std::shared_ptr<void> prepare(const LaunchArgs& a) {
  return eager_attention::prepare_plans(AttentionAxes::of(a.shape), a.dtype);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "attention_fwd",
    .name = "baseline_eager_cublaslt",
    .role = Role::baseline,
    .description = "materialised scores as HF eager attention: repeat_kv copies, cuBLASLt Q K^T, one masked "
                   "softmax (scale, soft-cap, mask, lse), cuBLASLt P V, copy back to bshd",
    .launch = by_dtype_of<DType::fp16, DType::bf16>([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = refuse,
    .workspace_bytes = [](const Shape& s, DType dtype) { return eager_attention::buffers(AttentionAxes::of(s), dtype).total; },
    .uses = {"cuBLASLt"},
    .prepare = prepare,
});

}  // namespace
}  // namespace kwb
