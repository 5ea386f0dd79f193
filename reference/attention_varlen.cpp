// attention_varlen_fwd: flash attention forward over sequences of different lengths packed one
// after another, as FlashAttention's varlen interface takes them (sample packing in training):
// each sequence attends to its own tokens only, with attention_fwd's causal mask, sliding window,
// soft-cap and grouped-query heads (reference/attention_varlen.hpp holds the layout and the
// lengths).
//
// Work model. FLOPs = 4 h d per visible (query, key) pair of each sequence, the real pairs only
// (no padding): sum_b visible_pairs(L_b). Bytes: every tensor once (q, k, v, cu_seqlens read; o,
// lse written). At b6 s4096 ragged h32/8 d128 causal (17.6k tokens, lengths 1473-4096) that is
// 4.7e11 FLOPs against 0.36 GB: compute-bound, the roof is the dtype's tensor cores.
//
// Verification is whole (no sample axis: a token's sequence, and so its keys, depend on where it
// sits in the packing). The oracle runs attention_fwd's (reference/attention_tile.hpp's
// attention_oracle_rows) on each sequence's slice, on the worker's GPU where that pays; its error
// bounds are attention_fwd's at the longest sequence's keys.
//
// Inputs: q and k ~ N(0, 1.5), v ~ N(0, 1) (peaky attention, as attention_fwd); cu_seqlens derived
// on the device from the lengths' formula.
#include "reference/attention_varlen.hpp"

#include <numeric>
#include <vector>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/attention_catalogue.hpp"
#include "reference/attention_tile.hpp"
#include "reference/attention_varlen_offsets_gpu.hpp"

namespace kwb {
namespace varlen {

Shape varlen_shape(std::int64_t batch, std::int64_t seq, std::int64_t heads, std::int64_t kv_heads,
                   std::int64_t head_dim, const char* causal, const char* lengths, std::int64_t window,
                   const char* softcap) {
  Shape s = attention_shape(batch, seq, heads, kv_heads, head_dim, causal, window, softcap);
  s.axes.emplace_back("lengths", lengths);
  return s;
}

std::vector<AxisSpec> varlen_axes() {
  std::vector<AxisSpec> axes = attention_axes();
  for (AxisSpec& axis : axes)
    if (axis.name == "seq") axis.help = "tokens of the longest sequence (queries = keys: self-attention)";
  axes.push_back({"lengths", 0, {}, "sequence lengths: ragged (uniform over (seq/4, seq]), equal, or with_empty "
                                    "(ragged, every third sequence empty)",
                  {"ragged", "equal", "with_empty"}});
  return axes;
}

std::optional<std::string> varlen_invalid(const Shape& s) {
  if (auto problem = attention_invalid(s)) return problem;
  const auto v = VarlenAxes::of(s);
  if (v.attention.batch > 65535 || v.attention.heads > 65535) return "batch and heads must be at most 65535 (grid y and z)";
  if (v.total() > (std::int64_t{1} << 31) - 1) return "the packed tokens must number fewer than 2^31 (int32 offsets)";
  return std::nullopt;
}

// A single token; empty sequences between others (every third); lengths one past a 64-row tile and
// around 128; windows of 1, 33 (a band) and 64; soft-caps; multi-query heads.
std::vector<Shape> varlen_edge_shapes() {
  return {
      varlen_shape(1, 1, 1, 1, 64, "0", "equal"),
      varlen_shape(3, 65, 2, 2, 64, "1", "with_empty"),
      varlen_shape(5, 129, 4, 2, 128, "1", "with_empty", 0, "30"),
      varlen_shape(4, 200, 3, 1, 128, "0", "ragged", 33),
      varlen_shape(2, 257, 2, 2, 128, "1", "ragged", 64),
      varlen_shape(7, 131, 2, 1, 64, "1", "with_empty", 1),
      varlen_shape(2, 3, 4, 1, 128, "1", "equal"),
      varlen_shape(6, 127, 4, 2, 128, "0", "with_empty", 0, "50"),
  };
}

}  // namespace varlen

namespace {

using varlen::VarlenAxes;
using varlen::varlen_shape;

std::vector<TensorSpec> varlen_tensors(const Shape& s, DType dtype) {
  const auto v = VarlenAxes::of(s);
  const AttentionAxes& a = v.attention;
  const std::int64_t total = v.total();
  const auto qk_init = Distribution::normal(0.0, 1.5);
  return {
      {.name = "q", .dims = {total, a.heads, a.head_dim}, .init = qk_init},
      {.name = "k", .dims = {total, a.kv_heads, a.head_dim}, .init = qk_init},
      {.name = "v", .dims = {total, a.kv_heads, a.head_dim}, .init = Distribution::normal(0.0, 1.0)},
      {.name = "cu_seqlens", .dims = {a.batch + 1}, .init = Distribution::derived(), .elem = ElemType::int32},
      {.name = "o", .dims = {total, a.heads, a.head_dim}, .is_output = true,
       .tolerance = attention_output_tolerance(a.max_keys(), dtype)},
      {.name = "lse", .dims = {a.heads, total}, .is_output = true, .elem = ElemType::fp32,
       .tolerance = attention_lse_tolerance(a.max_keys(), dtype)},
  };
}

// in: q, k, v packed, cu_seqlens; out: o packed, lse [h, total]. Each non-empty sequence through
// attention_oracle_rows on its slice; its lse rows land at head * total + start.
void varlen_oracle(const Shape& s, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const AttentionAxes a = VarlenAxes::of(s).attention;
  const std::int64_t h = a.heads, kvh = a.kv_heads, d = a.head_dim, total = in[0].dims[0];
  const auto& offsets = in[3].values;
  HostTensor& o = out[0];
  HostTensor& lse = out[1];
  o.abs_sum.assign(o.values.size(), 0.0);
  o.root_sum_sq.assign(o.values.size(), 0.0);
  lse.root_sum_sq.assign(lse.values.size(), 0.0);
  for (std::int64_t b = 0; b < a.batch; ++b) {
    const auto start = static_cast<std::int64_t>(offsets[static_cast<std::size_t>(b)]);
    const auto length = static_cast<std::int64_t>(offsets[static_cast<std::size_t>(b + 1)]) - start;
    if (length <= 0) continue;
    AttentionAxes one = a;
    one.batch = 1;
    one.seq = length;
    std::vector<std::int64_t> rows(static_cast<std::size_t>(length));
    std::iota(rows.begin(), rows.end(), std::int64_t{0});
    std::vector<double> seq_lse(static_cast<std::size_t>(h * length)), seq_lse_rss(seq_lse.size());
    const std::size_t q_at = static_cast<std::size_t>(start * h * d), kv_at = static_cast<std::size_t>(start * kvh * d);
    attention_oracle_rows(one, rows.data(), length, in[0].values.data() + q_at, in[1].values.data() + kv_at,
                          in[2].values.data() + kv_at,
                          {o.values.data() + q_at, seq_lse.data(), o.abs_sum.data() + q_at,
                           o.root_sum_sq.data() + q_at, seq_lse_rss.data()});
    for (std::int64_t head = 0; head < h; ++head)
      for (std::int64_t i = 0; i < length; ++i) {
        const auto at = static_cast<std::size_t>(head * total + start + i);
        lse.values[at] = seq_lse[static_cast<std::size_t>(head * length + i)];
        lse.root_sum_sq[at] = seq_lse_rss[static_cast<std::size_t>(head * length + i)];
      }
  }
}

// 16-23k packed tokens, Llama-3-8B's heads (h32/8, d128): ragged batches of 4, 6, 8 and 16
// sequences, the dense headline b4 s4096 h32 packed with equal lengths (against attention_fwd's
// figure), d64 and a non-causal batch. The first is the catalogue's example: its axis values are
// distinct, so the page names every tensor's dims by their axes.
std::vector<Shape> varlen_default_shapes() {
  return {
      varlen_shape(6, 4096, 32, 8, 128, "1", "ragged"),  varlen_shape(16, 2048, 32, 8, 128, "1", "ragged"),
      varlen_shape(4, 8192, 32, 8, 128, "1", "ragged"),  varlen_shape(4, 4096, 32, 32, 128, "1", "equal"),
      varlen_shape(8, 4096, 32, 8, 64, "1", "ragged"),   varlen_shape(8, 4096, 32, 8, 128, "0", "ragged"),
  };
}

KWB_REGISTER_OP(Op{
    .name = varlen::kOp,
    .description = "flash attention forward over packed sequences of different lengths (cu_seqlens): each "
                   "sequence attends to its own tokens, causal / sliding window / soft-cap, grouped-query heads",
    .axes = varlen::varlen_axes(),
    .dtypes = {DType::bf16, DType::fp16},
    .tensors = varlen_tensors,
    .work = [](const Shape& s, DType dtype) {
      const auto v = VarlenAxes::of(s);
      const AttentionAxes& a = v.attention;
      double pairs = 0;
      for (std::int64_t b = 0; b < a.batch; ++b) pairs += a.mask().visible_pairs(v.length(b));
      return WorkModel{tensor_bytes(varlen_tensors(s, dtype), dtype),
                       4.0 * static_cast<double>(a.heads * a.head_dim) * pairs};
    },
    .oracle = varlen_oracle,
    .derive_inputs = ref::attention_varlen_derive_offsets,
    .sample_axis = "",
    .compute_unit = "tensor",
    .default_shapes = varlen_default_shapes(),
    .edge_shapes = varlen::varlen_edge_shapes(),
    .invalid = varlen::varlen_invalid,
});

}  // namespace
}  // namespace kwb
