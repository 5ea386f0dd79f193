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

namespace kwb {
namespace {

std::optional<std::string> refuse(const Shape& s, DType dtype) {
  return eager_attention::refuse_large(eager_attention::buffers(AttentionAxes::of(s), dtype));
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
    .launch = by_dtype_of<DType::fp16, DType::bf16>([]<class T>(const LaunchArgs& a) {
      const auto axes = AttentionAxes::of(a.shape);
      eager_attention::self_attention<T>(a, axes, AttentionParams::of(axes));
    }),
    .refuse = refuse,
    .workspace_bytes = [](const Shape& s, DType dtype) { return eager_attention::buffers(AttentionAxes::of(s), dtype).total; },
    .uses = {"cuBLASLt"},
    .prepare = prepare,
});

}  // namespace
}  // namespace kwb
