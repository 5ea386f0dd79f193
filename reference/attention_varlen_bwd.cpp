// attention_varlen_bwd: flash attention's backward over packed sequences of different lengths, the
// backward of attention_varlen_fwd (FlashAttention's varlen backward, as sample-packed training
// runs it). From Q, K, V, the forward's O and lse, and dO, the gradients dQ, dK and dV, each
// sequence on its own tokens with attention_bwd's formulas (reference/attention_bwd.hpp: causal
// mask, sliding window, soft-cap, grouped-query heads with dK and dV summed over a group), D_i =
// rowsum(dO * O) part of the op. Layout (reference/attention_varlen_bwd.hpp): packed [total, h, d]
// tensors, lse [h, total], cu_seqlens; the axes, lengths and edge shapes are attention_varlen_fwd's.
//
// Work model. FLOPs = 10 h d per visible (query, key) pair of each sequence, the real pairs only:
// attention_bwd's five GEMM-shaped products (2.5x the forward's 4 h d) over attention_varlen_fwd's
// pairs, sum_b visible_pairs(L_b). Bytes: every tensor once (q, k, v, cu_seqlens, o, lse, do read;
// dq, dk, dv written). At b6 s4096 ragged h32/8 d128 causal (17.6k tokens, lengths 1473-4096):
// 1.2e12 FLOPs against 0.72 GB: compute-bound, the roof is the dtype's tensor cores.
//
// Inputs: as attention_bwd's (Q and K ~ N(0, 1.5), V and dO ~ N(0, 1)); cu_seqlens, O and lse
// derived on the device: the offsets from the lengths' formula (as attention_varlen_fwd's), then
// the forward of each sequence in fp32 (reference/attention_bwd_inputs_gpu.hpp), O rounded to the
// dtype, so that O and lse belong to the case's Q, K and V.
//
// Oracle: attention_bwd's (reference/attention_bwd_oracle.hpp) on each sequence's slice as a dense
// attention of batch 1 and its own length; empty sequences hold no token and give nothing. Its
// error bounds are attention_bwd's at the longest sequence's keys. Verification is whole, not
// sampled as attention_bwd's is: the harness samples along an axis whose size is a tensor's dim,
// and the packed token dim is no axis (a token's sequence, and so its keys, depend on where it
// sits in the packing). Cost, estimated (not measured): ~0.5 us of one core per visible (pair, head)
// at d = 128 (dq's pass, then dk's and dv's: ~17 d fp64 operations), threaded: ~35 s on 16 cores at
// b8 s4096 ragged causal (1.1e9 of them), kept in the oracle cache between runs.
#include "reference/attention_varlen_bwd.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/attention_bwd_inputs_gpu.hpp"
#include "reference/attention_bwd_oracle.hpp"

namespace kwb {
namespace {

using varlen::VarlenAxes;
using varlen::varlen_shape;

std::vector<TensorSpec> varlen_bwd_tensors(const Shape& s, DType dtype) {
  const auto v = VarlenAxes::of(s);
  const AttentionAxes& a = v.attention;
  const std::int64_t total = v.total();
  const auto qk_init = Distribution::normal(0.0, 1.5);
  // attention_bwd's bounds at the longest sequence: a query sees at most max_keys keys, a key is
  // seen by at most as many queries of each of its group's heads.
  const double keys = static_cast<double>(a.max_keys());
  const double queries = keys * static_cast<double>(a.heads / a.kv_heads);
  const std::vector<std::int64_t> q_dims{total, a.heads, a.head_dim};
  const std::vector<std::int64_t> kv_dims{total, a.kv_heads, a.head_dim};
  return {
      {.name = "q", .dims = q_dims, .init = qk_init},
      {.name = "k", .dims = kv_dims, .init = qk_init},
      {.name = "v", .dims = kv_dims, .init = Distribution::normal(0.0, 1.0)},
      {.name = "cu_seqlens", .dims = {a.batch + 1}, .init = Distribution::derived(), .elem = ElemType::int32},
      {.name = "o", .dims = q_dims, .init = Distribution::derived()},
      {.name = "lse", .dims = {a.heads, total}, .init = Distribution::derived(), .elem = ElemType::fp32},
      {.name = "do", .dims = q_dims, .init = Distribution::normal(0.0, 1.0)},
      {.name = "dq", .dims = q_dims, .is_output = true, .tolerance = attention_bwd_gradient_tolerance(a, dtype, keys)},
      {.name = "dk", .dims = kv_dims, .is_output = true,
       .tolerance = attention_bwd_gradient_tolerance(a, dtype, queries)},
      {.name = "dv", .dims = kv_dims, .is_output = true,
       .tolerance = attention_bwd_gradient_tolerance(a, dtype, queries)},
  };
}

// `count` rows of `width` values from `from` (row `first` on) into a tensor of its own.
HostTensor slice(const HostTensor& from, std::vector<std::int64_t> dims, std::int64_t first, std::int64_t count,
                 std::int64_t width) {
  HostTensor t{from.name, std::move(dims), {}};
  const auto begin = from.values.begin() + first * width;
  t.values.assign(begin, begin + count * width);
  return t;
}

// `count` rows of `width` values (and their magnitudes) from `part` into `into` at row `first`.
void place(const HostTensor& part, HostTensor& into, std::int64_t first, std::int64_t width) {
  const auto at = static_cast<std::ptrdiff_t>(first * width);
  std::copy(part.values.begin(), part.values.end(), into.values.begin() + at);
  std::copy(part.abs_sum.begin(), part.abs_sum.end(), into.abs_sum.begin() + at);
  std::copy(part.root_sum_sq.begin(), part.root_sum_sq.end(), into.root_sum_sq.begin() + at);
}

// in: q, k, v, cu_seqlens, o, lse [h, total], do; out: dq, dk, dv packed. Sequence b is
// attention_bwd's oracle on its tokens [start, start + L) as batch 1 of seq L (every position):
// its q, k, v, o and do rows are contiguous slices, its lse rows gathered from [h, total] into
// [1, h, L]; its dq, dk and dv land back at its rows.
void varlen_bwd_oracle(const Shape& s, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const AttentionAxes a = VarlenAxes::of(s).attention;
  const std::int64_t h = a.heads, kvh = a.kv_heads, d = a.head_dim, total = in[0].dims[0];
  const auto& offsets = in[3].values;
  // Every token belongs to one sequence, so every element is written below (the tests check it).
  for (HostTensor& t : out) {
    t.abs_sum.assign(t.values.size(), 0.0);
    t.root_sum_sq.assign(t.values.size(), 0.0);
  }
  for (std::int64_t b = 0; b < a.batch; ++b) {
    const auto start = static_cast<std::int64_t>(offsets[static_cast<std::size_t>(b)]);
    const auto length = static_cast<std::int64_t>(offsets[static_cast<std::size_t>(b + 1)]) - start;
    if (length <= 0) continue;
    Shape one = s;  // attention_bwd reads its own axes; `lengths` rides along unread
    for (auto& [name, value] : one.axes) {
      if (name == "batch") value = AxisValue(std::int64_t{1});
      if (name == "seq") value = AxisValue(length);
    }
    const std::vector<std::int64_t> q_dims{1, length, h, d}, kv_dims{1, length, kvh, d};
    HostTensor lse{"lse", {1, h, length}, std::vector<double>(static_cast<std::size_t>(h * length))};
    for (std::int64_t head = 0; head < h; ++head)
      for (std::int64_t i = 0; i < length; ++i)
        lse.values[static_cast<std::size_t>(head * length + i)] = in[5].values[static_cast<std::size_t>(head * total + start + i)];
    const std::vector<HostTensor> part{slice(in[0], q_dims, start, length, h * d),
                                       slice(in[1], kv_dims, start, length, kvh * d),
                                       slice(in[2], kv_dims, start, length, kvh * d),
                                       slice(in[4], q_dims, start, length, h * d),
                                       std::move(lse),
                                       slice(in[6], q_dims, start, length, h * d)};
    std::vector<HostTensor> grads;
    for (const auto& dims : {q_dims, kv_dims, kv_dims})
      grads.push_back({"", dims, std::vector<double>(static_cast<std::size_t>(length * dims[2] * d))});
    std::vector<std::int64_t> rows(static_cast<std::size_t>(length));
    std::iota(rows.begin(), rows.end(), std::int64_t{0});
    attention_bwd_oracle(one, rows, part, grads);
    place(grads[0], out[0], start, h * d);
    place(grads[1], out[1], start, kvh * d);
    place(grads[2], out[2], start, kvh * d);
  }
}

// attention_varlen_fwd's ragged batches at Llama-3-8B's heads (h32/8, d128): its headline b6
// s4096 first (the catalogue's example: its axis values are distinct, so the page names every
// tensor's dims by their axes; and the forward's figure beside it), b8 at the longest 2048 and
// 4096, d64, and a non-causal batch. Whole verification's oracle (~110 s a dtype on 16 cores for
// the five, by the estimate above) keeps the set at these.
std::vector<Shape> varlen_bwd_default_shapes() {
  return {
      varlen_shape(6, 4096, 32, 8, 128, "1", "ragged"), varlen_shape(8, 2048, 32, 8, 128, "1", "ragged"),
      varlen_shape(8, 4096, 32, 8, 128, "1", "ragged"), varlen_shape(8, 4096, 32, 8, 64, "1", "ragged"),
      varlen_shape(8, 2048, 32, 8, 128, "0", "ragged"),
  };
}

KWB_REGISTER_OP(Op{
    .name = varlen_bwd::kOp,
    .description = "flash attention backward over packed sequences of different lengths (cu_seqlens): dQ, dK, dV "
                   "from Q, K, V, the forward's O and lse, and dO (D = rowsum(dO * O) included), causal / sliding "
                   "window / soft-cap, grouped-query heads",
    .axes = varlen::varlen_axes(),
    .dtypes = {DType::bf16, DType::fp16},
    .tensors = varlen_bwd_tensors,
    .work = [](const Shape& s, DType dtype) {
      const auto v = VarlenAxes::of(s);
      const AttentionAxes& a = v.attention;
      double pairs = 0;
      for (std::int64_t b = 0; b < a.batch; ++b) pairs += a.mask().visible_pairs(v.length(b));
      return WorkModel{tensor_bytes(varlen_bwd_tensors(s, dtype), dtype),
                       10.0 * static_cast<double>(a.heads * a.head_dim) * pairs};
    },
    .oracle = varlen_bwd_oracle,
    .derive_inputs = ref::attention_varlen_bwd_derive_inputs,
    .sample_axis = "",
    .compute_unit = "tensor",
    .default_shapes = varlen_bwd_default_shapes(),
    .edge_shapes = varlen::varlen_edge_shapes(),
    .invalid = varlen::varlen_invalid,
});

}  // namespace
}  // namespace kwb
