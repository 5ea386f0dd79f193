// rope_fwd and rope_bwd: rotate-half rotary position embedding (as HF Llama's
// apply_rotary_pos_emb) of Q and K together, and its transpose for the gradients.
//
// For each token at position p, each head of q and k, and i < D/2 (D = head_dim):
//   out[i]       = x[i] * cos[p, i] - x[i + D/2] * sin[p, i]
//   out[i + D/2] = x[i + D/2] * cos[p, i] + x[i] * sin[p, i]
// rope_bwd applies the transposed rotation (sin negated) to dq_out and dk_out.
//
// Positions (choice axis `positions`):
//   index: token s of each sequence sits at position s; the tables hold `seq` rows.
//   ids:   an int64 position_ids [batch, seq] tensor, drawn as start + s with a start per
//          sequence in [0, seq] (continuing a longer context); the tables hold 2 * seq rows.
// Tables: cos and sin [table_rows, D/2] in fp32, whatever the case dtype. They are shared by
// every head and every sequence (small next to q and k), fp32 keeps the rotation exact at
// bf16, and half-width fp32 rows cost the same bytes as the full-width bf16 rows HF builds
// (cat(freqs, freqs)). They are drawn uniform in [-1, 1], not as cos/sin of angles: the formula
// does not assume cos^2 + sin^2 = 1, and independent draws catch a kernel that swaps them.
//
// Verification samples along `seq`: q, k, the outputs and position_ids run along it, and in
// index mode so do the tables (row s serves token s), so the oracle needs no global index.
//
// Napkin math: q and k are read once and written once; position_ids read once; of the tables
// the work model counts `seq` rows each, the rows every sequence must read (index mode reads
// exactly those; in ids mode the rows read lie between seq and 2 * seq, so counting seq never
// inflates GB/s). flops: 2 mul + 1 add per output element = 3 per element of q and k.
#include "reference/rope.hpp"

#include <cmath>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"

namespace kwb {
namespace {

Shape rope_shape(std::int64_t batch, std::int64_t seq, std::int64_t heads, std::int64_t kv_heads,
                 std::int64_t head_dim, const char* positions = "index") {
  return Shape{{{"batch", batch},
                {"seq", seq},
                {"heads", heads},
                {"kv_heads", kv_heads},
                {"head_dim", head_dim},
                {"positions", positions}}};
}

// Realistic LLM shapes. The torch.compile peer (TARGETS.md) rotates q alone at 8192 tokens x
// 32 heads x 128: compare GB/s at 1x8192x32 with kv_heads 8 or 32, or time at 1x4096x32x32,
// whose q and k hold exactly the peer's q elements.
std::vector<Shape> rope_default_shapes() {
  return {
      rope_shape(1, 8192, 32, 8, 128),          // the peer's tokens, Llama-3-8B heads
      rope_shape(1, 8192, 32, 32, 128),         // the peer's tokens, full MHA (Llama-2-7B)
      rope_shape(1, 4096, 32, 32, 128),         // q + k = the peer's q elements: times compare
      rope_shape(1, 8192, 32, 8, 128, "ids"),   // position ids (KV-cache continuation)
      rope_shape(4, 4096, 32, 8, 128),          // 16K tokens
      rope_shape(8, 8192, 32, 8, 128),          // 64K tokens: q is 256M elements
      rope_shape(2, 4096, 64, 8, 128, "ids"),   // Llama-3-70B heads
      rope_shape(1, 8192, 28, 4, 128),          // Qwen2-7B heads
      rope_shape(4, 2048, 16, 16, 64),          // head_dim 64 (small models)
      rope_shape(2, 4100, 32, 32, 80),          // head_dim 80, seq not a power of two
      rope_shape(2, 4096, 32, 8, 72, "ids"),    // D/2 = 36: not a multiple of 8 bf16 lanes
  };
}

std::vector<Shape> rope_edge_shapes() {
  return {
      rope_shape(1, 1, 1, 1, 2),             // one token, one pair
      rope_shape(1, 7, 1, 1, 4, "ids"),      // hand-size heads, partial block of tokens
      rope_shape(1, 7, 3, 1, 6),             // D/2 = 3: scalar lanes only
      rope_shape(3, 5, 5, 5, 130),           // D/2 = 65, odd
      rope_shape(2, 33, 4, 2, 64, "ids"),
      rope_shape(1, 33, 8, 8, 72, "ids"),    // D/2 = 36: 4 lanes in bf16
      rope_shape(2, 100, 12, 4, 80),
      rope_shape(2, 17, 32, 8, 128, "ids"),  // 320 items per token: more than a block's threads
      rope_shape(1, 1000, 2, 1, 128),
      rope_shape(4, 31, 16, 16, 64, "ids"),
      rope_shape(1, 40, 64, 8, 256),         // many, wide heads: 1152 (bf16) items per token
      rope_shape(1, 3, 2, 2, 1026, "ids"),   // D/2 = 513, odd
      rope_shape(1, 2, 1, 1, 8192),          // the widest head the fused kernels take
  };
}

// Each output is a difference (or sum) of two products, x1 cos -+ x2 sin, computed in fp32 from
// exact inputs and rounded once to the case dtype (the eager chain too: its products and sum
// are fp32). The two products can cancel, so the bound (fp32_error_bound) scales with them:
// A = |x1 cos| + |x2 sin|, at most two fp32 roundings (products, sum; or an fma) of that size.
std::vector<TensorSpec> rope_tensors(const Shape& s, DType dtype, bool backward) {
  const rope::Axes n = rope::Axes::of(s);
  const Tolerance out_tol = fp32_error_bound(elem_type_of(dtype));
  const std::int64_t rows = n.table_rows();
  const Distribution table_init = Distribution::uniform(-1.0, 1.0);
  // Index mode: row s of the tables serves token s, so the tables run along the sample axis.
  const int table_sample_dim = n.ids ? -1 : 0;
  std::vector<TensorSpec> t = {
      {.name = backward ? "dq_out" : "q", .dims = {n.batch, n.seq, n.heads, n.head_dim}, .sample_dim = 1,
       .init = Distribution::normal(0.0, 1.0)},
      {.name = backward ? "dk_out" : "k", .dims = {n.batch, n.seq, n.kv_heads, n.head_dim}, .sample_dim = 1,
       .init = Distribution::normal(0.0, 1.0)},
      {.name = "cos", .dims = {rows, n.half()}, .sample_dim = table_sample_dim, .init = table_init,
       .elem = ElemType::fp32},
      {.name = "sin", .dims = {rows, n.half()}, .sample_dim = table_sample_dim, .init = table_init,
       .elem = ElemType::fp32},
  };
  if (n.ids)
    t.push_back({.name = "position_ids", .dims = {n.batch, n.seq}, .sample_dim = 1,
                 .init = Distribution::position_ids(n.seq, n.seq), .elem = ElemType::int64});
  t.push_back({.name = backward ? "dq" : "q_out", .dims = {n.batch, n.seq, n.heads, n.head_dim},
               .is_output = true, .sample_dim = 1, .tolerance = out_tol});
  t.push_back({.name = backward ? "dk" : "k_out", .dims = {n.batch, n.seq, n.kv_heads, n.head_dim},
               .is_output = true, .sample_dim = 1, .tolerance = out_tol});
  return t;
}

WorkModel rope_work(const Shape& s, DType dtype) {
  const rope::Axes n = rope::Axes::of(s);
  const double qk_elements = static_cast<double>(n.tokens() * (n.heads + n.kv_heads) * n.head_dim);
  const double table_bytes = 2.0 * static_cast<double>(n.seq * n.half()) * 4;  // seq rows of cos and sin
  const double ids_bytes = n.ids ? static_cast<double>(n.tokens()) * 8 : 0;
  return {2 * qk_elements * static_cast<double>(dtype_size(dtype)) + table_bytes + ids_bytes, 3 * qk_elements};
}

// Rotates every head of q and k; sin_sign = -1 gives the transpose (the backward).
void rope_oracle(const Shape& shape, const std::vector<HostTensor>& in, std::vector<HostTensor>& out,
                 double sin_sign) {
  const rope::Axes n = rope::Axes::of(shape);
  const std::int64_t half = n.half(), dim = n.head_dim;
  const auto& cos = in[rope::kCos].values;
  const auto& sin = in[rope::kSin].values;
  const std::int64_t rows = in[rope::kCos].dims[0];  // the whole table, also when seq is sampled
  for (int which = 0; which < 2; ++which) {
    const auto& x = in[which == 0 ? rope::kQ : rope::kK].values;
    auto& y = out[static_cast<std::size_t>(which)].values;
    auto& magnitude = out[static_cast<std::size_t>(which)].abs_sum;
    magnitude.assign(y.size(), 0.0);
    const std::int64_t heads = which == 0 ? n.heads : n.kv_heads;
    for (std::int64_t t = 0; t < n.tokens(); ++t) {
      const std::int64_t pos = n.ids ? static_cast<std::int64_t>(in[rope::kIds].values[static_cast<std::size_t>(t)])
                                     : t % n.seq;
      const bool valid = pos >= 0 && pos < rows;  // an id outside the table gives NaN, as the kernels do
      for (std::int64_t h = 0; h < heads; ++h) {
        const std::int64_t base = (t * heads + h) * dim;
        for (std::int64_t i = 0; i < half; ++i) {
          const double c = valid ? cos[static_cast<std::size_t>(pos * half + i)] : NAN;
          const double sn = valid ? sin_sign * sin[static_cast<std::size_t>(pos * half + i)] : NAN;
          const double x1 = x[static_cast<std::size_t>(base + i)], x2 = x[static_cast<std::size_t>(base + half + i)];
          y[static_cast<std::size_t>(base + i)] = x1 * c - x2 * sn;
          y[static_cast<std::size_t>(base + half + i)] = x2 * c + x1 * sn;
          magnitude[static_cast<std::size_t>(base + i)] = std::fabs(x1 * c) + std::fabs(x2 * sn);
          magnitude[static_cast<std::size_t>(base + half + i)] = std::fabs(x2 * c) + std::fabs(x1 * sn);
        }
      }
    }
  }
}

std::optional<std::string> rope_invalid(const Shape& s) {
  for (const char* axis : {"batch", "seq", "heads", "kv_heads", "head_dim"})
    if (s.at(axis) < 1) return std::string(axis) + " must be at least 1";
  if (s.at("head_dim") % 2 != 0) return "head_dim must be even: rotate-half pairs element i with i + head_dim/2";
  if (s.at("heads") % s.at("kv_heads") != 0) return "kv_heads must divide heads (grouped KV heads)";
  return std::nullopt;
}

std::vector<AxisSpec> rope_axes() {
  // Read in tables as "b1 s8192 h32/8 d128 pos=ids" (harness/catalogue/shape_label.hpp).
  return {{"batch", 1, {}, "independent sequences", {}, "b"},
          {"seq", 8192, {}, "tokens per sequence (layout [batch * seq, heads, head_dim])", {}, "s"},
          {"heads", 32, {}, "query heads", {}, "h"},
          {"kv_heads", 8, {}, "key heads (grouped KV: divides heads)", {}, "/"},
          {"head_dim", 128, {}, "elements per head, even: pairs (i, i + head_dim/2) rotate", {}, "d"},
          {"positions", 0, {}, "index: token s at position s; ids: int64 position_ids [batch, seq]",
           {"index", "ids"}, "pos="}};
}

constexpr const char* kPositionsNote =
    " Positions: index (token s of a sequence at s, tables of seq rows) or ids (int64 position_ids "
    "[batch, seq] = start + s, start in [0, seq], tables of 2*seq rows). cos, sin: [rows, D/2] fp32.";

KWB_REGISTER_OP(Op{
    .name = "rope_fwd",
    .description = std::string("RoPE (rotate-half) of q and k, [batch, seq, heads, D]: out[i] = x[i]*cos[p,i] - "
                               "x[i+D/2]*sin[p,i], out[i+D/2] = x[i+D/2]*cos[p,i] + x[i]*sin[p,i], i < D/2.") +
                   kPositionsNote,
    .axes = rope_axes(),
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = [](const Shape& s, DType dtype) { return rope_tensors(s, dtype, false); },
    .work = rope_work,
    .oracle = [](const Shape& s, const std::vector<HostTensor>& in,
                 std::vector<HostTensor>& out) { rope_oracle(s, in, out, 1.0); },
    .sample_axis = "seq",
    .compute_unit = "fp32",
    .default_shapes = rope_default_shapes(),
    .edge_shapes = rope_edge_shapes(),
    .invalid = rope_invalid,
});

KWB_REGISTER_OP(Op{
    .name = "rope_bwd",
    .description = std::string("RoPE backward: the transposed rotation of dq_out, dk_out: dx[i] = g[i]*cos[p,i] + "
                               "g[i+D/2]*sin[p,i], dx[i+D/2] = g[i+D/2]*cos[p,i] - g[i]*sin[p,i], i < D/2.") +
                   kPositionsNote,
    .axes = rope_axes(),
    .dtypes = {DType::fp32, DType::fp16, DType::bf16},
    .tensors = [](const Shape& s, DType dtype) { return rope_tensors(s, dtype, true); },
    .work = rope_work,
    .oracle = [](const Shape& s, const std::vector<HostTensor>& in,
                 std::vector<HostTensor>& out) { rope_oracle(s, in, out, -1.0); },
    .sample_axis = "seq",
    .compute_unit = "fp32",
    .default_shapes = rope_default_shapes(),
    .edge_shapes = rope_edge_shapes(),
    .invalid = rope_invalid,
});

}  // namespace
}  // namespace kwb
