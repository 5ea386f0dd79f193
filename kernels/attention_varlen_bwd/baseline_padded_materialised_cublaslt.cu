// attention_varlen_bwd baseline_padded_materialised_cublaslt: what an eager framework does for the
// backward of packed sequences with no varlen kernel: pad them to the longest, run attention_bwd's
// materialised backward with a length mask, and unpad the gradients:
//
//   q, do = (pad_sequence(t.split(lengths)).transpose(1, 2) for t in (q, do))   # 1, 2 [b, h, s, d],
//                                                                                #   zeros past L_b
//   k, v = (repeat_kv(pad_sequence(t.split(lengths)), group) for t in (k, v))    # 3, 4 kv expanded
//   s = q @ k.transpose(2, 3); dp = do @ v.transpose(2, 3)                       # 5, 6 bmm, fp32 out
//   D = (do.float() * o.float()).sum(-1)                                         # 7 o read packed, 0
//                                                                                #   on padded rows
//   lse = pad(lse)                                                               # 8 [h, total] -> [b, h, s]
//   p, ds = exp(l - lse), p (dp - D) l'(s), 0 where masked or padded             # 9 one row kernel
//   dv, dk, dq = p^T @ do, ds^T @ q, ds @ k                                      # 10-12 bmm, fp32
//   dq = (dq * scale)[valid]                                                     # 13 unpad
//   dk = (dk * scale).view(b, kvh, group, s, d).sum(2)[valid]                    # 14 group sum, unpad
//   dv = dv.view(b, kvh, group, s, d).sum(2)[valid]                              # 15
//
// Steps 5, 6 and 9-12 are attention_bwd's baseline's (materialised_bwd.cuh), at the longest
// sequence's length: the key-length mask keeps padded keys out of every sum (P and dS 0), and a
// padded query's row of P and dS is 0, so it adds nothing to dK and dV and its dQ row is dropped
// by the unpad. A ragged batch pays for its padding, b * h * s^2 scores and their gradients, as
// eager padding does.
//
// Workspace: attention_bwd's baseline's at the padded shape plus the padded lse [b, h, s] fp32;
// cases needing more than 60 GiB are refused.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <optional>
#include <string>

#include "kernels/attention_bwd/materialised_bwd.cuh"
#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/eager_attention.cuh"
#include "kernels/attention_varlen_fwd/padded_rows.cuh"
#include "kernels/common/eager_ops.cuh"
#include "reference/attention_varlen_bwd.hpp"

namespace kwb {
namespace step {
struct pad_transpose_q;
struct pad_transpose_do;
struct pad_repeat_kv_k;
struct pad_repeat_kv_v;
struct rowsum_do_times_o_padded;
struct pad_lse;
struct scale_dq_unpad;
struct sum_kv_group_dk_unpad;
struct sum_kv_group_dv_unpad;
}  // namespace step

namespace {

// attention_bwd's buffers at the padded shape (seq: the longest), the padded lse after them.
materialised_bwd::Buffers padded_buffers(const Shape& s, DType dtype) {
  const AttentionAxes a = varlen::VarlenAxes::of(s).attention;
  return materialised_bwd::buffers(a, dtype, static_cast<std::size_t>(a.batch * a.heads * a.seq) * sizeof(float));
}

using varlen_padding::PaddedIndex;

template <class T>
void launch_typed(const LaunchArgs& a) {
  const auto axes = varlen::VarlenAxes::of(a.shape).attention;
  AttentionParams p = AttentionParams::of(axes);
  p.cu_seqlens = a.tensor<const std::int32_t>("cu_seqlens");
  const std::int64_t h = p.heads, kvh = p.kv_heads, s = p.seq, d = p.head_dim, group = h / kvh;
  const std::int64_t n = p.batch * h * s * d, n_kv = p.batch * kvh * s * d;
  const std::int64_t total = a.specs->front().dims[0];  // q [total, h, d]
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
  const materialised_bwd::Buffers b = padded_buffers(a.shape, a.dtype);
  const materialised_bwd::Views<T> w = materialised_bwd::views<T>(a.workspace, b);
  T *qt = w.qt, *dot = w.dot, *kx = w.kx, *vx = w.vx;
  float *row_d = w.row_d, *dq_h = w.dq_h, *dk_h = w.dk_h, *dv_h = w.dv_h;
  float* lse_padded = reinterpret_cast<float*>(static_cast<char*>(a.workspace) + b.extra);  // [b, h, s]
  const auto& plans = a.state_as<materialised_bwd::Plans>();

  // 1-4: pad to [b, h, s, d] (K and V expanded to the h query heads), 16 bytes a thread.
  const std::int64_t c = d / 8;  // 16-byte chunks of a head's row
  const PaddedIndex chunk{p.cu_seqlens, s, h, c};
  const auto* q16 = reinterpret_cast<const uint4*>(q);
  const auto* do16 = reinterpret_cast<const uint4*>(dout);
  const auto* k16 = reinterpret_cast<const uint4*>(k);
  const auto* v16 = reinterpret_cast<const uint4*>(v);
  auto* qt16 = reinterpret_cast<uint4*>(qt);
  auto* dot16 = reinterpret_cast<uint4*>(dot);
  auto* kx16 = reinterpret_cast<uint4*>(kx);
  auto* vx16 = reinterpret_cast<uint4*>(vx);
  const std::int64_t chunks = n / 8;
  varlen_padding::pad_heads<step::pad_transpose_q>(chunk, chunks, q16, qt16, h, 1, a.stream);
  varlen_padding::pad_heads<step::pad_transpose_do>(chunk, chunks, do16, dot16, h, 1, a.stream);
  varlen_padding::pad_heads<step::pad_repeat_kv_k>(chunk, chunks, k16, kx16, kvh, group, a.stream);
  varlen_padding::pad_heads<step::pad_repeat_kv_v>(chunk, chunks, v16, vx16, kvh, group, a.stream);
  // 5, 6: S and dP, fp32, over the padded square.
  materialised_bwd::scores_and_dprobs(plans, w, a.workspace, a.stream);
  // 7: D per padded row r = (b * h + head) * s + i from the packed dO and O; 0 on padded rows.
  const PaddedIndex rows{p.cu_seqlens, s, h, 1};
  eager_row_reduce<step::rowsum_do_times_o_padded>(
      row_d, p.batch * h * s, d, 1.0f, a.stream, [=] __device__(std::int64_t r, std::int64_t col) {
        std::int64_t hh, e;
        const std::int64_t row = rows.packed_row(r, hh, e);
        if (row < 0) return 0.0f;
        const std::int64_t at = (row * h + hh) * d + col;
        return to_float(dout[at]) * to_float(o[at]);
      });
  // 8: lse [h, total] -> [b, h, s] (0 on padded rows, which step 9 never reads).
  eager_map<step::pad_lse>(p.batch * h * s, a.stream, [=] __device__(std::int64_t i) {
    std::int64_t hh, e;
    const std::int64_t row = rows.packed_row(i, hh, e);
    lse_padded[i] = row >= 0 ? lse[hh * total + row] : 0.0f;
  });
  // 9: P and dS under the causal / window mask and each sequence's length; 10-12: dV, dK, dQ per
  // query head, fp32.
  materialised_bwd::score_grads_and_products<T, /*kPacked=*/true>(plans, w, lse_padded, p, a.workspace, a.stream);
  // 13-15: scale, repeat_kv's backward (the sum over each kv head's group), unpadded to [total, *, d].
  const PaddedIndex q_elems{p.cu_seqlens, s, h, d};
  eager_map<step::scale_dq_unpad>(n, a.stream, [=] __device__(std::int64_t i) {
    std::int64_t hh, e;
    const std::int64_t row = q_elems.packed_row(i, hh, e);
    if (row >= 0) dq[(row * h + hh) * d + e] = from_float<T>(scale * dq_h[i]);
  });
  // Unit i of [b, kvh, s, d]: kv head kh's group of query heads kh * group + g in the [b, h, s, d] sums.
  const PaddedIndex kv_elems{p.cu_seqlens, s, kvh, d};
  eager_map<step::sum_kv_group_dk_unpad>(n_kv, a.stream, [=] __device__(std::int64_t i) {
    std::int64_t kh, t, e;
    const std::int64_t row = kv_elems.packed_row(i, kh, t, e);
    if (row < 0) return;
    const std::int64_t bb = i / (d * s * kvh);
    float sum = 0;
    for (std::int64_t g = 0; g < group; ++g) sum += dk_h[((bb * h + kh * group + g) * s + t) * d + e];
    dk[(row * kvh + kh) * d + e] = from_float<T>(scale * sum);
  });
  eager_map<step::sum_kv_group_dv_unpad>(n_kv, a.stream, [=] __device__(std::int64_t i) {
    std::int64_t kh, t, e;
    const std::int64_t row = kv_elems.packed_row(i, kh, t, e);
    if (row < 0) return;
    const std::int64_t bb = i / (d * s * kvh);
    float sum = 0;
    for (std::int64_t g = 0; g < group; ++g) sum += dv_h[((bb * h + kh * group + g) * s + t) * d + e];
    dv[(row * kvh + kh) * d + e] = from_float<T>(sum);
  });
}

KWB_REGISTER_VARIANT(Variant{
    .op = varlen_bwd::kOp,
    .name = "baseline_padded_materialised_cublaslt",
    .role = Role::baseline,
    .description = "eager padding: packed sequences padded to the longest (repeat_kv included), attention_bwd's "
                   "materialised cuBLASLt backward with a length mask, gradients unpadded (dK, dV summed over "
                   "each group)",
    .launch = by_dtype_of<DType::fp16, DType::bf16>([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse =
        [](const Shape& s, DType dtype) {
          return eager_attention::refuse_workspace(padded_buffers(s, dtype).total,
                                                   "padded, materialised scores and their gradients");
        },
    .workspace_bytes = [](const Shape& s, DType dtype) { return padded_buffers(s, dtype).total; },
    .uses = {"cuBLASLt"},
    .prepare = [](const LaunchArgs& a) {
      return materialised_bwd::prepare_plans(varlen::VarlenAxes::of(a.shape).attention, a.dtype);
    },
});

}  // namespace
}  // namespace kwb
