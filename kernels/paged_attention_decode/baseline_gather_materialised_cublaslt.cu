// paged_attention_decode baseline_gather_materialised_cublaslt: what an eager framework runs on a
// paged cache without a paged kernel: gather every sequence's pages into a contiguous cache, then
// attention with materialised scores, padded to the longest sequence and masked by length:
//
//   k = k_cache[block_tables].view(b, pps * P, kvh, d).transpose(1, 2)  # 1 gather: copy [b, kvh, Lp, d]
//   v = v_cache[block_tables] ...                                        # 2 gather
//   q = q.transpose(1, 2)                                                # 3 copy [b, h, q_len, d]
//   s = q.view(b, kvh, group * q_len, d) @ k.transpose(2, 3)             # 4 bmm, output in the dtype
//   p = softmax(s * scale + length_mask, dim=-1, dtype=float32).to(q.dtype)  # 5 one fused kernel here
//   o = (p @ v).view(b, h, q_len, d)                                     # 6 bmm
//   o = o.transpose(1, 2).contiguous()                                   # 7 copy back
//
// Lp = pages_per_seq * page_size: whole pages are gathered (an index_select cannot stop inside a
// page), the slots past a sequence's length hold stale but finite cache values and are masked.
// The masked softmax does torch's scale, mask add, softmax to fp32 and cast in one pass, so this
// is kinder than eager torch by three passes over the scores; the scores are small next to the
// gathered cache (q_len x group rows against d columns per key).
//
// Napkin math (b32 ctx4096 h32/8 d128 bf16): the gather reads 537 MB of pages and writes 537 MB
// (16-byte vectors, as torch's indexing copies them), the two GEMMs read it again (537 MB), the
// scores are 8 MB: ~1.6 GB of traffic, ~0.55 ms at 3 TB/s against ~0.18 ms for one read. (The
// first cut copied 2 bytes a thread: 1.55 ms per gather at b32, 93% of the baseline's time.)
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
#include "kernels/common/align_up.hpp"
#include "kernels/common/block_reduce.cuh"
#include "kernels/common/eager_ops.cuh"
#include "reference/paged_attention_decode.hpp"

namespace kwb {
namespace step {
struct gather_k_pages;
struct gather_v_pages;
struct transpose_q_to_bhsd;
struct transpose_o_to_bshd;
}  // namespace step

namespace {

using paged_decode::PagedDecodeAxes;


struct Buffers {
  std::size_t kg, vg, qt, scores, probs, ot, total;
};
Buffers buffers(const PagedDecodeAxes& a, DType dtype) {
  const std::size_t e = elem_size(elem_type_of(dtype));
  const std::size_t padded = static_cast<std::size_t>(a.pages_per_seq() * a.page_size);
  const std::size_t cache = align_up(static_cast<std::size_t>(a.batch * a.kv_heads * a.head_dim) * padded * e);
  const std::size_t rows = static_cast<std::size_t>(a.batch * a.heads * a.q_len);
  Buffers b{};
  b.kg = kLtWorkspaceBytes;
  b.vg = b.kg + cache;
  b.qt = b.vg + cache;
  b.scores = b.qt + align_up(rows * static_cast<std::size_t>(a.head_dim) * e);
  b.probs = b.scores + align_up(rows * padded * e);
  b.ot = b.probs + align_up(rows * padded * e);
  b.total = b.ot + align_up(rows * static_cast<std::size_t>(a.head_dim) * e);
  return b;
}

std::optional<std::string> refuse(const Shape& s, DType dtype) {
  const auto a = PagedDecodeAxes::of(s);
  if (auto too_large = eager_attention::refuse_workspace(buffers(a, dtype).total, "the gathered cache"))
    return too_large;
  if (a.batch * a.kv_heads > 65535) return "batch * kv_heads must be at most 65535 (cuBLASLt's batch count)";
  return std::nullopt;
}

// One block per score row ((b * kvh + kv) * rows + r), r = g * q_len + t: the logits of keys j <=
// L_b - q_len + t (scale, -inf elsewhere), softmax in fp32, P written in the dtype over all Lp keys.
template <class T>
__global__ void length_masked_softmax(const T* __restrict__ scores, T* __restrict__ probs,
                                      const std::int32_t* __restrict__ lengths, std::int64_t padded,
                                      std::int64_t kv_heads, int rows, int q_len, float scale) {
  __shared__ float scratch[32];
  const std::int64_t row = blockIdx.x;
  const std::int64_t b = row / (kv_heads * rows);
  const int t = static_cast<int>(row % rows) % q_len;
  const std::int64_t visible = lengths[b] - q_len + t + 1;  // keys 0 .. visible - 1
  const T* in = scores + row * padded;
  T* out = probs + row * padded;
  float m = -INFINITY;
  for (std::int64_t j = threadIdx.x; j < visible; j += blockDim.x) m = fmaxf(m, to_float(in[j]) * scale);
  m = block_max(m, scratch);
  float sum = 0;
  for (std::int64_t j = threadIdx.x; j < visible; j += blockDim.x) sum += expf(to_float(in[j]) * scale - m);
  sum = block_sum(sum, scratch);
  const float inv = 1.0f / sum;
  for (std::int64_t j = threadIdx.x; j < padded; j += blockDim.x)
    out[j] = from_float<T>(j < visible ? expf(to_float(in[j]) * scale - m) * inv : 0.0f);
}

// Where 16-byte chunk i of the gathered [b, kvh, Lp, d] cache comes from: chunk c of token j of
// sequence bb's pages, kv head kv (an element offset). One thread per 16 bytes, as PyTorch's
// index kernels copy whole vectors: per element, the index arithmetic alone would bound the
// gather far under the DRAM roof.
struct PageGather {
  const std::int32_t* tables;
  std::int64_t pages_per_seq, page_size, padded, kv_heads, d;
  __device__ std::int64_t source(std::int64_t i) const {
    const std::int64_t chunks = d / 8;
    const std::int64_t c = i % chunks, j = (i / chunks) % padded, kv = (i / (chunks * padded)) % kv_heads;
    const std::int64_t bb = i / (chunks * padded * kv_heads);
    return paged_decode::cache_row(tables + bb * pages_per_seq, j, page_size, kv_heads, kv, d) + c * 8;
  }
};

template <class T>
void launch_typed(const LaunchArgs& a) {
  const auto axes = PagedDecodeAxes::of(a.shape);
  const std::int64_t h = axes.heads, kvh = axes.kv_heads, d = axes.head_dim, q_len = axes.q_len;
  const std::int64_t page_size = axes.page_size, pages_per_seq = axes.pages_per_seq();
  const std::int64_t padded = pages_per_seq * page_size;
  const int rows = static_cast<int>(axes.group() * q_len);
  const T* q = a.tensor<const T>("q");
  const T* k_cache = a.tensor<const T>("k_cache");
  const T* v_cache = a.tensor<const T>("v_cache");
  const std::int32_t* tables = a.tensor<const std::int32_t>("block_tables");
  const std::int32_t* lengths = a.tensor<const std::int32_t>("context_lens");
  T* o = a.tensor<T>("o");
  const Buffers b = buffers(axes, a.dtype);
  char* ws = static_cast<char*>(a.workspace);
  T* kg = reinterpret_cast<T*>(ws + b.kg);
  T* vg = reinterpret_cast<T*>(ws + b.vg);
  T* qt = reinterpret_cast<T*>(ws + b.qt);
  T* scores = reinterpret_cast<T*>(ws + b.scores);
  T* probs = reinterpret_cast<T*>(ws + b.probs);
  T* ot = reinterpret_cast<T*>(ws + b.ot);
  const PageGather cache_index{tables, pages_per_seq, page_size, padded, kvh, d};
  const std::int64_t chunks = axes.batch * kvh * padded * d / 8, qo = axes.batch * h * q_len * d;
  const auto* k16 = reinterpret_cast<const uint4*>(k_cache);
  const auto* v16 = reinterpret_cast<const uint4*>(v_cache);
  auto* kg16 = reinterpret_cast<uint4*>(kg);
  auto* vg16 = reinterpret_cast<uint4*>(vg);
  eager_map<step::gather_k_pages>(chunks, a.stream, [=] __device__(std::int64_t i) { kg16[i] = k16[cache_index.source(i) / 8]; });
  eager_map<step::gather_v_pages>(chunks, a.stream, [=] __device__(std::int64_t i) { vg16[i] = v16[cache_index.source(i) / 8]; });
  eager_map<step::transpose_q_to_bhsd>(qo, a.stream, [=] __device__(std::int64_t i) { qt[i] = q[bshd_index(i, q_len, h, d, h, 1)]; });
  const auto& plans = a.state_as<eager_attention::Plans>();
  plans.scores->run(kg, qt, scores, a.workspace, a.stream);
  length_masked_softmax<T><<<static_cast<unsigned>(axes.batch * kvh * rows), 256, 0, a.stream>>>(
      scores, probs, lengths, padded, kvh, rows, static_cast<int>(q_len), 1.0f / std::sqrt(static_cast<float>(d)));
  plans.output->run(vg, probs, ot, a.workspace, a.stream);
  eager_map<step::transpose_o_to_bshd>(qo, a.stream, [=] __device__(std::int64_t i) { o[bshd_index(i, q_len, h, d, h, 1)] = ot[i]; });
}

// The two products per (sequence, kv head): its group x q_len query rows against the padded keys.
std::shared_ptr<void> prepare(const LaunchArgs& a) {
  const auto axes = PagedDecodeAxes::of(a.shape);
  return eager_attention::prepare_plans(axes.batch * axes.kv_heads, axes.group() * axes.q_len,
                                        axes.pages_per_seq() * axes.page_size, axes.head_dim, a.dtype);
}

KWB_REGISTER_VARIANT(Variant{
    .op = paged_decode::kOp,
    .name = "baseline_gather_materialised_cublaslt",
    .role = Role::baseline,
    .description = "eager paged attention: gather the pages into a contiguous cache, cuBLASLt Q K^T, one "
                   "length-masked softmax, cuBLASLt P V, copies to and from bhsd",
    .launch = by_dtype_of<DType::fp16, DType::bf16>([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = refuse,
    .workspace_bytes = [](const Shape& s, DType dtype) { return buffers(PagedDecodeAxes::of(s), dtype).total; },
    .uses = {"cuBLASLt"},
    .prepare = prepare,
});

}  // namespace
}  // namespace kwb
