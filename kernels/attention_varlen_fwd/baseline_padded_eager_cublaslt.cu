// attention_varlen_fwd baseline_padded_eager_cublaslt: what an eager framework does with packed
// sequences and no varlen kernel: pad them to the longest, run attention with materialised scores
// and a length mask, and unpad:
//
//   q = pad_sequence(q.split(lengths)).transpose(1, 2)        # 1 copy to [b, h, s, d], zeros past L_b
//   k = repeat_kv(pad_sequence(k.split(lengths)), group)      # 2 copy, kv heads expanded
//   v = ...                                                   # 3
//   s = q @ k.transpose(2, 3)                                 # 4 bmm, output in the dtype
//   p = softmax(mask(s * scale), dtype=float32).to(q.dtype)   # 5 one kernel here (mask: causal,
//                                                             #   window, soft-cap and the length)
//   o = p @ v                                                 # 6 bmm
//   o, lse = o[valid], lse[valid]                             # 7, 8 unpad (lse to [h, total])
//
// The materialised steps are attention_fwd's baseline's (eager_attention.cuh), at the longest
// sequence's length: a ragged batch pays for its padding, b * h * s^2 scores, as eager padding does.
//
// Workspace: attention_fwd's baseline's at the padded shape plus the padded lse; cases needing
// more than 60 GiB are refused.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/eager_attention.cuh"
#include "kernels/attention_varlen_fwd/padded_rows.cuh"
#include "kernels/common/eager_ops.cuh"
#include "reference/attention_varlen.hpp"

namespace kwb {
namespace step {
struct pad_transpose_q;
struct pad_repeat_kv_k;
struct pad_repeat_kv_v;
struct unpad_o;
struct unpad_lse;
}  // namespace step

namespace {

eager_attention::Buffers padded_buffers(const Shape& s, DType dtype) {
  const AttentionAxes a = varlen::VarlenAxes::of(s).attention;  // seq: the longest, every sequence padded to it
  return eager_attention::buffers(a, dtype, static_cast<std::size_t>(a.batch * a.heads * a.seq) * sizeof(float));
}

using varlen_padding::PaddedIndex;

template <class T>
void launch_typed(const LaunchArgs& a) {
  const auto axes = varlen::VarlenAxes::of(a.shape).attention;
  AttentionParams p = AttentionParams::of(axes);
  p.cu_seqlens = a.tensor<const std::int32_t>("cu_seqlens");
  const std::int64_t h = p.heads, kvh = p.kv_heads, s = p.seq, d = p.head_dim, group = h / kvh;
  const std::int64_t n = p.batch * h * s * d;
  const std::int64_t total = a.specs->front().dims[0];  // q [total, h, d]
  const T* q = a.tensor<const T>("q");
  const T* k = a.tensor<const T>("k");
  const T* v = a.tensor<const T>("v");
  T* o = a.tensor<T>("o");
  float* lse = a.tensor<float>("lse");
  const eager_attention::Buffers b = padded_buffers(a.shape, a.dtype);
  const eager_attention::Views<T> w = eager_attention::views<T>(a.workspace, b);
  T *qt = w.qt, *kx = w.kx, *vx = w.vx, *scores = w.scores, *probs = w.probs, *ot = w.ot;
  float* lse_padded = reinterpret_cast<float*>(static_cast<char*>(a.workspace) + b.extra);  // [b, h, s]
  const std::int64_t c = d / 8;  // 16-byte chunks of a head's row
  const PaddedIndex at{p.cu_seqlens, s, h, c};
  const auto* q16 = reinterpret_cast<const uint4*>(q);
  const auto* k16 = reinterpret_cast<const uint4*>(k);
  const auto* v16 = reinterpret_cast<const uint4*>(v);
  auto* qt16 = reinterpret_cast<uint4*>(qt);
  auto* kx16 = reinterpret_cast<uint4*>(kx);
  auto* vx16 = reinterpret_cast<uint4*>(vx);
  const std::int64_t chunks = n / 8;
  varlen_padding::pad_heads<step::pad_transpose_q>(at, chunks, q16, qt16, h, 1, a.stream);
  varlen_padding::pad_heads<step::pad_repeat_kv_k>(at, chunks, k16, kx16, kvh, group, a.stream);
  varlen_padding::pad_heads<step::pad_repeat_kv_v>(at, chunks, v16, vx16, kvh, group, a.stream);
  const auto& plans = a.state_as<eager_attention::Plans>();
  plans.scores->run(kx, qt, scores, a.workspace, a.stream);
  eager_attention::masked_softmax<T><<<static_cast<unsigned>(p.batch * h * s), 256, 0, a.stream>>>(scores, probs,
                                                                                                lse_padded, p);
  plans.output->run(vx, probs, ot, a.workspace, a.stream);
  auto* o16 = reinterpret_cast<uint4*>(o);
  const auto* ot16 = reinterpret_cast<const uint4*>(ot);
  eager_map<step::unpad_o>(chunks, a.stream, [=] __device__(std::int64_t i) {
    std::int64_t hh, e;
    const std::int64_t row = at.packed_row(i, hh, e);
    if (row >= 0) o16[(row * h + hh) * c + e] = ot16[i];
  });
  // lse_padded [b, h, s] -> lse [h, total]: the same walk, one value a unit.
  const PaddedIndex rows{p.cu_seqlens, s, h, 1};
  eager_map<step::unpad_lse>(p.batch * h * s, a.stream, [=] __device__(std::int64_t i) {
    std::int64_t hh, e;
    const std::int64_t row = rows.packed_row(i, hh, e);
    if (row >= 0) lse[hh * total + row] = lse_padded[i];
  });
}

KWB_REGISTER_VARIANT(Variant{
    .op = varlen::kOp,
    .name = "baseline_padded_eager_cublaslt",
    .role = Role::baseline,
    .description = "eager padding: packed sequences padded to the longest (repeat_kv included), attention_fwd's "
                   "materialised cuBLASLt attention with a length mask, unpadded",
    .launch = by_dtype_of<DType::fp16, DType::bf16>([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = [](const Shape& s, DType dtype) { return eager_attention::refuse_large(padded_buffers(s, dtype)); },
    .workspace_bytes = [](const Shape& s, DType dtype) { return padded_buffers(s, dtype).total; },
    .uses = {"cuBLASLt"},
    .prepare = [](const LaunchArgs& a) {
      return eager_attention::prepare_plans(varlen::VarlenAxes::of(a.shape).attention, a.dtype);
    },
});

}  // namespace
}  // namespace kwb
