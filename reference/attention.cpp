// attention_fwd: flash-attention forward with a causal mask, a sliding window, a logit soft-cap
// and grouped-query heads, saving the log-sum-exp for a backward pass (reference/attention.hpp
// holds the formulas and the mask's exact definition).
//
// Layout (FlashAttention's, bshd): Q [b, s, h, d], K and V [b, s, kv_heads, d], O [b, s, h, d] in
// the case dtype, lse [b, h, s] in fp32. Scale 1 / sqrt(d). bf16 and fp16 only: a flash kernel's
// GEMMs run on the tensor cores in the input dtype, and fp32 attention is not what it is for.
//
// Work model. FLOPs = 4 * b * h * d * (visible (query, key) pairs): 2 for the multiply-add of
// q . k and 2 for p * v, per visible pair. Causal counts the pairs it really computes,
// s (s + 1) / 2 per head, which is FlashAttention's benchmark convention (half the non-causal
// FLOPs) up to the diagonal; a window counts its band. The exponentials, the scale and the
// soft-cap are not counted (FlashAttention's figures count only the two GEMMs). Bytes: every
// tensor once (Q, K, V read, O and lse written); at s = 4096, d = 128 that is ~0.5 byte per
// FLOP-pair: deeply compute-bound, the roof is the dtype's tensor cores.
//
// Verification samples along `seq`: Q, O (dim 1) and lse (dim 2) are gathered at the sampled
// query rows; K and V stay whole (every query reads every key). The oracle needs the original
// positions of the sampled rows for the mask, so it is a positional_oracle (Op's field).
// Cost: per sampled row and head, keys * d * 5 multiply-adds in fp64 (q . k, p v, and three for
// the error magnitudes of output_tolerance); the largest default case (s 16384, 512 sampled rows
// x 32 heads, causal) is ~8.6e10 multiply-adds: several seconds on 16 cores, because the queries of one kv head are tiled so that each K and V row is fetched once
// per tile of 64 queries (attention_tile), not once per query (8 MB of fp64 K/V per row at 16k).
//
// Inputs: Q and K ~ N(0, 1.5), so logits have a standard deviation of 1.5^2 = 2.25 (extremes near
// +-10 at 16k keys): peaky attention as in trained models, where a few tens of keys carry the
// weight and O stays O(0.1 .. 1); with N(0, 1) O shrinks like 1 / sqrt(seq) and every error looks
// small. V ~ N(0, 1).
#include "reference/attention.hpp"

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/oracle_device.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/attention_catalogue.hpp"
#include "reference/attention_fp64_gpu.hpp"
#include "reference/attention_tile.hpp"

namespace kwb {

// Sequences of 1, 3, one past a 64-row tile (65), one short of and one past 128, a prime; odd
// windows (1: the diagonal alone, 7, 33 without causal: a band), kv_heads 1 (multi-query).
std::vector<Shape> attention_edge_shapes() {
  return {
      attention_shape(1, 1, 1, 1, 64, "0"),           attention_shape(2, 3, 4, 1, 128, "1"),
      attention_shape(1, 65, 2, 2, 64, "1", 0, "30"), attention_shape(1, 127, 4, 2, 128, "0"),
      attention_shape(2, 129, 2, 1, 64, "1", 7),      attention_shape(1, 200, 3, 1, 128, "0", 33, "50"),
      attention_shape(1, 257, 2, 2, 128, "1", 64),    attention_shape(1, 131, 2, 1, 64, "1", 1),
  };
}

std::vector<AxisSpec> attention_axes() {
  // Read in tables as "b4 s4096 h32/8 d128 causal w256 cap30" (harness/catalogue/shape_label.hpp).
  return {{"batch", 4, {}, "sequences", {}, "b"},
          {"seq", 4096, {}, "tokens per sequence (queries = keys: self-attention)", {}, "s"},
          {"heads", 32, {}, "query heads", {}, "h"},
          {"kv_heads", 32, {}, "key/value heads; divides heads (grouped-query attention)", {}, "/"},
          {"head_dim", 128, {}, "d: 64 or 128", {}, "d"},
          {"causal", 0, {}, "1: query i sees keys j <= i (0 first, as FlashAttention's causal=False)", {"0", "1"},
           "causal"},
          {"window", 0, {}, "sliding window w: causal i - w < j <= i, else |i - j| < w; 0: none", {}, "w"},
          {"softcap", 0, {}, "logit soft-cap: cap * tanh(s / cap); 0: none", {"0", "30", "50"}, "cap"}};
}

std::optional<std::string> attention_invalid(const Shape& s) {
  const auto a = AttentionAxes::of(s);
  if (a.batch < 1 || a.seq < 1 || a.heads < 1 || a.kv_heads < 1) return "batch, seq, heads and kv_heads must be at least 1";
  if (a.heads % a.kv_heads != 0) return "kv_heads must divide heads (grouped-query attention)";
  if (a.head_dim != 64 && a.head_dim != 128) return "head_dim must be 64 or 128";
  if (a.window < 0) return "window must be 0 (none) or positive";
  return std::nullopt;
}

namespace {

// ~16k tokens per case (b = 16384 / s), 32 query heads (Llama-2-7B's MHA and Llama-3-8B's GQA
// with 8 kv heads), d 128 and 64. b4 h32 s4096 d128 causal is the headline case (FA2's
// ~320 TFLOP/s on an H100); b4 s4096 and b1 s16384, causal and not, are the shapes the forward is
// judged by against cuDNN; sliding window 1024 (Mistral-like) and soft-cap 50 (Gemma 2) one each.
std::vector<Shape> attention_default_shapes() {
  return {
      attention_shape(32, 512, 32, 32, 128, "1"),   attention_shape(16, 1024, 32, 8, 128, "1"),
      attention_shape(8, 2048, 32, 32, 128, "0"),   attention_shape(4, 4096, 32, 32, 128, "1"),
      attention_shape(4, 4096, 32, 32, 128, "0"),   attention_shape(4, 4096, 32, 8, 64, "1"),
      attention_shape(2, 8192, 32, 8, 128, "1"),    attention_shape(1, 16384, 32, 8, 128, "1"),
      attention_shape(1, 16384, 32, 8, 128, "0"),
      attention_shape(4, 4096, 32, 8, 128, "1", 1024),
      attention_shape(4, 4096, 32, 16, 128, "1", 0, "50"),
  };
}

// Error bounds (harness/catalogue/tolerance.hpp). The oracle reports, per element of O (query i,
// dim e, normalised weights p_j over the visible keys, g_j = attention_logit_sensitivity):
//   A = sum_j p_j |v_je|                                   (the terms of the P V sum)
//   R = sqrt(sum_j p_j^2 (v_je^2 + g_j^2 (v_je - o_e)^2))   (the rounded terms, below)
// and per lse, R = sqrt(sum_j (p_j g_j)^2). What each real variant rounds:
//   - P to the dtype before P V (every flash kernel's A operand, the baseline's P): term j off by
//     up to u p_j |v_je|, independently per key: the p_j v_je part of R.
//   - the raw score q . k stored in the dtype (the eager baseline's S, as torch.matmul returns
//     it): logit j off by eps_j g_j, |eps_j| <= u, which moves O by sum_j p_j eps_j g_j (v_je - o_e)
//     (the weights renormalise) and lse by sum_j p_j eps_j g_j: the g_j parts of R. In bf16 this
//     is the largest error any real variant makes (|g| up to ~10 at the default inputs).
//   - fp32 accumulation of P V on the tensor cores: 2 u32 per m16n8k16 step of 16 keys, and one
//     rescale of O per 64-key tile (flash) or one normalisation: the A part.
//   - O's own rounding to the dtype: rtol 1.25 u (rounding_rtol). fp16 weights below 6e-5 are
//     subnormal and lose their relative precision (2^-25 absolute each, random sign): atol
//     4 sqrt(K) 2^-25 (bf16: none).
//   - lse in fp32 from fp32 row sums (relative error up to u32 per add: at most K / 4 adds per
//     lane of a flash quad, fewer in the baseline's block reduction) and a log: the fp32 table
//     plus u32 (K / 4 + 16) absolute.
// Scales: rounded_terms_scale = 3 u (7 sigma), fp32_roundings_scale for the adds.
//
// What the bound catches (tests/reference/attention_error_bound_test.cpp simulates both in
// bf16 and fp16 with the kernels' rounding steps): a logit scale off by 1% moves logit j by
// 0.01 g_j. On lse that shift is coherent, 0.01 sum_j p_j g_j ~ 0.05 at seq 4096, against a bound
// of 3 u sqrt(sum (p_j g_j)^2), which the averaging over the ~10-50 keys that carry a row shrinks:
// every row fails, in bf16 and fp16. On O it is 0.01 sum_j p_j (g_j - mean g) (v_je - o_e), random
// in sign across elements: fp16's bound (3 u, u = 2^-11) sits ~7x under it and most elements fail;
// in bf16 the baseline's stored scores (u = 2^-8, weighted by |g| rather than |g - mean g|) already
// make an error of the same order, so O alone catches it only in the tail (simulated: worst
// element 0.7-0.93x its bound over 1e4 elements, ~1.05x over 5e5, where 1-2 fail) and lse is the
// output that names the defect. Simulated real kernels: the flash kernels' P rounding at 0.14-0.3x
// the bound on O (lse < 0.01x), the eager baseline at 0.42-0.58x on O and <= 0.41x on lse.
}  // namespace

Tolerance attention_output_tolerance(std::int64_t max_keys, DType dtype) {
  const ElemType out = elem_type_of(dtype);
  const double keys = static_cast<double>(max_keys);
  Tolerance t;
  t.atol = 4 * std::sqrt(keys) * subnormal_rounding(out);
  t.rtol = rounding_rtol(out);
  t.abs_sum_scale = fp32_roundings_scale(2 * std::ceil(keys / 16) + std::ceil(keys / 64));
  t.root_sum_sq_scale = rounded_terms_scale(out);
  return t;
}
namespace {

Tolerance output_tolerance(const AttentionAxes& a, DType dtype) { return attention_output_tolerance(a.max_keys(), dtype); }

}  // namespace

Tolerance attention_lse_tolerance(std::int64_t max_keys, DType dtype) {
  const double keys = static_cast<double>(max_keys);
  Tolerance t = default_tolerance(ElemType::fp32);
  t.atol += unit_roundoff(ElemType::fp32) * (keys / 4 + 16);
  t.root_sum_sq_scale = rounded_terms_scale(elem_type_of(dtype));
  return t;
}

namespace {

Tolerance lse_tolerance(const AttentionAxes& a, DType dtype) { return attention_lse_tolerance(a.max_keys(), dtype); }

std::vector<TensorSpec> attention_tensors(const Shape& s, DType dtype) {
  const auto a = AttentionAxes::of(s);
  const auto qk_init = Distribution::normal(0.0, 1.5);
  return {
      {.name = "q", .dims = {a.batch, a.seq, a.heads, a.head_dim}, .sample_dim = 1, .init = qk_init},
      {.name = "k", .dims = {a.batch, a.seq, a.kv_heads, a.head_dim}, .init = qk_init},
      {.name = "v", .dims = {a.batch, a.seq, a.kv_heads, a.head_dim}, .init = Distribution::normal(0.0, 1.0)},
      {.name = "o", .dims = {a.batch, a.seq, a.heads, a.head_dim}, .is_output = true, .sample_dim = 1,
       .tolerance = output_tolerance(a, dtype)},
      {.name = "lse", .dims = {a.batch, a.heads, a.seq}, .is_output = true, .sample_dim = 2,
       .elem = ElemType::fp32, .tolerance = lse_tolerance(a, dtype)},
  };
}

}  // namespace

void attention_tile(const std::vector<QueryRef>& queries, const double* k, const double* v, std::int64_t seq,
                    std::int64_t d, std::int64_t kv_stride, const AttentionMask& mask, double softcap,
                    std::vector<double>& logits, std::vector<double>& sensitivity, std::vector<double>& moments) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const std::size_t nq = queries.size();
  std::vector<double> max_logit(nq, -INFINITY), sum(nq, 0.0), sum_pg2(nq, 0.0);
  std::int64_t lo = seq, hi = 0;
  for (const QueryRef& u : queries) {
    lo = std::min(lo, mask.first_key(u.position));
    hi = std::max(hi, mask.end_key(u.position, seq));
    std::fill(u.o, u.o + d, 0.0);
    std::fill(u.o_abs_sum, u.o_abs_sum + d, 0.0);
  }
  std::fill(moments.begin(), moments.begin() + static_cast<std::ptrdiff_t>(2 * d * nq), 0.0);
  for (std::int64_t j = lo; j < hi; ++j) {
    const double* kj = k + j * kv_stride;
    for (std::size_t u = 0; u < nq; ++u) {
      if (!queries[u].sees(mask, j, seq)) continue;
      const double* q = queries[u].q;
      double part[4] = {0, 0, 0, 0};  // four partial sums: no latency-bound chain of adds
      std::int64_t e = 0;
      for (; e + 4 <= d; e += 4)
        for (int w = 0; w < 4; ++w) part[w] += q[e + w] * kj[e + w];
      for (; e < d; ++e) part[0] += q[e] * kj[e];
      const double score = scale * ((part[0] + part[1]) + (part[2] + part[3]));
      const double l = attention_logit(score, softcap);
      const std::size_t at = u * static_cast<std::size_t>(seq) + static_cast<std::size_t>(j);
      logits[at] = l;
      sensitivity[at] = attention_logit_sensitivity(score, softcap);
      max_logit[u] = std::fmax(max_logit[u], l);
    }
  }
  for (std::int64_t j = lo; j < hi; ++j) {
    const double* vj = v + j * kv_stride;
    for (std::size_t u = 0; u < nq; ++u) {
      if (!queries[u].sees(mask, j, seq)) continue;
      const std::size_t at = u * static_cast<std::size_t>(seq) + static_cast<std::size_t>(j);
      const double p = std::exp(logits[at] - max_logit[u]), g = sensitivity[at];
      const double p2 = p * p, p2g2 = p2 * g * g, p2_1g2 = p2 + p2g2;
      sum[u] += p;
      sum_pg2[u] += p2g2;
      double* o = queries[u].o;
      double* abs_sum = queries[u].o_abs_sum;
      double* v2 = moments.data() + 2 * d * u;  // sum p^2 (1 + g^2) v^2
      double* gv = v2 + d;                      // sum p^2 g^2 v
      for (std::int64_t e = 0; e < d; ++e) {
        const double x = vj[e];
        o[e] += p * x;
        abs_sum[e] += p * std::fabs(x);
        v2[e] += p2_1g2 * x * x;
        gv[e] += p2g2 * x;
      }
    }
  }
  for (std::size_t u = 0; u < nq; ++u) {
    if (sum[u] == 0) {  // no key seen: O = 0 (filled above), lse = -inf, nothing rounded
      std::fill(queries[u].o_root_sum_sq, queries[u].o_root_sum_sq + d, 0.0);
      *queries[u].lse = -INFINITY;
      *queries[u].lse_root_sum_sq = 0;
      continue;
    }
    const double inv = 1.0 / sum[u], inv2 = inv * inv;
    const double* v2 = moments.data() + 2 * d * u;
    const double* gv = v2 + d;
    for (std::int64_t e = 0; e < d; ++e) {
      const double o = queries[u].o[e] * inv;
      queries[u].o[e] = o;
      queries[u].o_abs_sum[e] *= inv;
      const double r2 = (v2[e] - 2 * o * gv[e] + o * o * sum_pg2[u]) * inv2;
      queries[u].o_root_sum_sq[e] = std::sqrt(std::max(r2, 0.0));
    }
    *queries[u].lse = max_logit[u] + std::log(sum[u]);
    *queries[u].lse_root_sum_sq = std::sqrt(sum_pg2[u]) * inv;
  }
}

// in: q [b, n, h, d] (the n sampled rows, a.seq = n), k and v [b, seq, kvh, d] whole; out: o
// [b, n, h, d], lse [b, h, n] and their magnitudes. rows[r] is the position of sampled row r.
// Tasks are (batch, kv head, tile of sampled rows) with all the group's query heads, handed to
// threads one at a time (causal rows differ in cost).
void attention_oracle_rows(const AttentionAxes& a, const std::int64_t* rows, std::int64_t seq, const double* q,
                           const double* k, const double* v, const AttentionOracleOut& out,
                           const BlockMaskView& blocks) {
  const std::int64_t n = a.seq, h = a.heads, kvh = a.kv_heads, d = a.head_dim;
  const std::int64_t group = h / kvh;
  const std::int64_t rows_per_tile = std::max<std::int64_t>(1, kTileQueries / group);
  const std::int64_t row_tiles = (n + rows_per_tile - 1) / rows_per_tile;
  const std::int64_t tasks = a.batch * kvh * row_tiles;
  const AttentionMask mask = a.mask();
  // On the worker's GPU when it pays (every query of a full verification, or 16k keys a row):
  // the same formulas, agreeing to rounding (reference/attention_fp64_gpu.hpp).
  const double keys = static_cast<double>(a.window > 0 ? std::min(seq, a.causal ? a.window : 2 * a.window - 1) : seq);
  const double multiply_adds = 5.0 * static_cast<double>(a.batch * n * h * d) * keys;
  if (!blocks.kept && oracle_step_on_gpu(multiply_adds, "attention's oracle") &&
      ref::attention_fp64_gpu(a, {q, k, v, rows, n, seq, out.o, out.lse, out.o_abs_sum, out.o_root_sum_sq,
                                  out.lse_root_sum_sq}))
    return;
  std::atomic<std::int64_t> next{0};
  auto work = [&] {
    const auto tile_queries = static_cast<std::size_t>(rows_per_tile * group);
    std::vector<double> logits(tile_queries * static_cast<std::size_t>(seq)), sensitivity(logits.size());
    std::vector<double> moments(tile_queries * static_cast<std::size_t>(2 * d));
    std::vector<QueryRef> queries;
    for (std::int64_t t = next++; t < tasks; t = next++) {
      const std::int64_t tile = t % row_tiles, kv = (t / row_tiles) % kvh, b = t / (row_tiles * kvh);
      queries.clear();
      for (std::int64_t r = tile * rows_per_tile; r < std::min(n, (tile + 1) * rows_per_tile); ++r)
        for (std::int64_t head = kv * group; head < (kv + 1) * group; ++head) {
          const std::int64_t o_at = ((b * n + r) * h + head) * d, lse_at = (b * h + head) * n + r;
          const double* kept_blocks =
              blocks.kept ? blocks.kept + ((b * h + head) * blocks.blocks + rows[r] / blocks.block) * blocks.blocks
                          : nullptr;
          queries.push_back({q + o_at, out.o + o_at, out.lse + lse_at, rows[r], out.o_abs_sum + o_at,
                             out.o_root_sum_sq + o_at, out.lse_root_sum_sq + lse_at, kept_blocks, blocks.block});
        }
      attention_tile(queries, k + (b * seq * kvh + kv) * d, v + (b * seq * kvh + kv) * d, seq, d, kvh * d, mask,
                     a.softcap, logits, sensitivity, moments);
    }
  };
  const std::int64_t threads = std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1, tasks);
  std::vector<std::thread> pool;
  for (std::int64_t i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
}

namespace {

// The registered positional oracle: the true seq is K's dim 1.
void attention_oracle(const Shape& s, const std::vector<std::int64_t>& rows, const std::vector<HostTensor>& in,
                      std::vector<HostTensor>& out) {
  HostTensor& o = out[0];
  HostTensor& lse = out[1];
  o.abs_sum.assign(o.values.size(), 0.0);
  o.root_sum_sq.assign(o.values.size(), 0.0);
  lse.root_sum_sq.assign(lse.values.size(), 0.0);
  attention_oracle_rows(AttentionAxes::of(s), rows.data(), in[1].dims[1], in[0].values.data(), in[1].values.data(),
                        in[2].values.data(),
                        {o.values.data(), lse.values.data(), o.abs_sum.data(), o.root_sum_sq.data(),
                         lse.root_sum_sq.data()});
}

KWB_REGISTER_OP(Op{
    .name = "attention_fwd",
    .description = "flash attention forward: O = softmax(mask(softcap(Q K^T / sqrt(d)))) V and lse, bshd, "
                   "causal / sliding window / soft-cap, grouped-query heads",
    .axes = attention_axes(),
    .dtypes = {DType::bf16, DType::fp16},
    .tensors = attention_tensors,
    .work = [](const Shape& s, DType dtype) {
      const auto a = AttentionAxes::of(s);
      const double pairs = a.mask().visible_pairs(a.seq);
      return WorkModel{tensor_bytes(attention_tensors(s, dtype), dtype),
                       4.0 * static_cast<double>(a.batch * a.heads * a.head_dim) * pairs};
    },
    .positional_oracle = attention_oracle,
    .sample_axis = "seq",
    .compute_unit = "tensor",
    .default_shapes = attention_default_shapes(),
    .edge_shapes = attention_edge_shapes(),
    .invalid = attention_invalid,
});

}  // namespace
}  // namespace kwb
