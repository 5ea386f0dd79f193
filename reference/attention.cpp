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
// Cost: per sampled row and head, keys * d * 2 multiply-adds in fp64; the largest default case
// (s 16384, 512 sampled rows x 32 heads, causal) is ~3.4e10 multiply-adds: a few seconds on 16
// cores, because the queries of one kv head are tiled so that each K and V row is fetched once
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
#include "harness/catalogue/tolerance.hpp"

namespace kwb {
namespace {

Shape attention_shape(std::int64_t batch, std::int64_t seq, std::int64_t heads, std::int64_t kv_heads,
                      std::int64_t head_dim, const char* causal, std::int64_t window = 0,
                      const char* softcap = "0") {
  return Shape{{{"batch", batch},
                {"seq", seq},
                {"heads", heads},
                {"kv_heads", kv_heads},
                {"head_dim", head_dim},
                {"causal", causal},
                {"window", window},
                {"softcap", softcap}}};
}

// ~16k tokens per case (b = 16384 / s), 32 query heads (Llama-2-7B's MHA and Llama-3-8B's GQA
// with 8 kv heads), d 128 and 64. b4 h32 s4096 d128 causal is the headline case (FA2's
// ~320 TFLOP/s on an H100); sliding window 1024 (Mistral-like) and soft-cap 50 (Gemma 2) one each.
std::vector<Shape> attention_default_shapes() {
  return {
      attention_shape(32, 512, 32, 32, 128, "1"),   attention_shape(16, 1024, 32, 8, 128, "1"),
      attention_shape(8, 2048, 32, 32, 128, "0"),   attention_shape(4, 4096, 32, 32, 128, "1"),
      attention_shape(4, 4096, 32, 32, 128, "0"),   attention_shape(4, 4096, 32, 8, 64, "1"),
      attention_shape(2, 8192, 32, 8, 128, "1"),    attention_shape(1, 16384, 32, 8, 128, "1"),
      attention_shape(4, 4096, 32, 8, 128, "1", 1024),
      attention_shape(4, 4096, 32, 16, 128, "1", 0, "50"),
  };
}

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
  return {{"batch", 4, {}, "sequences"},
          {"seq", 4096, {}, "tokens per sequence (queries = keys: self-attention)"},
          {"heads", 32, {}, "query heads"},
          {"kv_heads", 32, {}, "key/value heads; divides heads (grouped-query attention)"},
          {"head_dim", 128, {}, "d: 64 or 128"},
          {"causal", 0, {}, "1: query i sees keys j <= i (0 first, as FlashAttention's causal=False)", {"0", "1"}},
          {"window", 0, {}, "sliding window w: causal i - w < j <= i, else |i - j| < w; 0: none"},
          {"softcap", 0, {}, "logit soft-cap: cap * tanh(s / cap); 0: none", {"0", "30", "50"}}};
}

std::optional<std::string> attention_invalid(const Shape& s) {
  const auto a = AttentionAxes::of(s);
  if (a.batch < 1 || a.seq < 1 || a.heads < 1 || a.kv_heads < 1) return "batch, seq, heads and kv_heads must be at least 1";
  if (a.heads % a.kv_heads != 0) return "kv_heads must divide heads (grouped-query attention)";
  if (a.head_dim != 64 && a.head_dim != 128) return "head_dim must be 64 or 128";
  if (a.window < 0) return "window must be 0 (none) or positive";
  return std::nullopt;
}

// O sums p_j v_j over up to max_keys() keys in fp32 (term_scale 1: |p_j v_j| <= |v_j| ~ 1, a
// bound, as sum p_j = 1). On top of it, the probabilities are rounded to the dtype before the
// P V product (every flash kernel's P operand, and the baseline's P) and the baseline's scores
// are stored in the dtype (torch's matmul output): each term off by ~u |p_j v_j| and each logit by
// u |l_j| (|l| up to ~10). The logit error is NOT averaged away: with peaky rows (logit std ~2.25)
// a few keys carry the output, each weight is off by a factor e^(u |l|) ~ 1 + 10 u, so O moves by
// up to ~10 u |v| with |v| up to ~4: 16 u more. Measured on an H100 (2026-11-23, default shapes,
// bf16): the baseline's worst error 0.050 against 4 u more's 0.024 bound (a few elements out of
// millions failed); 16 u gives 0.086. Flash kernels (fp32 scores) sit far inside. lse: exact inputs and an fp32
// dot over d give a flash kernel ~1e-6; the baseline's scores rounded to the dtype move lse by
// up to u max|l_j| <= u (|lse| + spread): rtol 2u and atol 8u.
Tolerance output_tolerance(const AttentionAxes& a, DType dtype) {
  const ElemType out = elem_type_of(dtype);
  Tolerance t = reduction_tolerance(out, a.max_keys(), ElemType::fp32, 1.0);
  t.atol += 16 * unit_roundoff(out);
  return t;
}
Tolerance lse_tolerance(DType dtype) {
  const double u = unit_roundoff(elem_type_of(dtype));
  const Tolerance base = default_tolerance(ElemType::fp32);
  return {base.atol + 8 * u, base.rtol + 2 * u};
}

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
       .elem = ElemType::fp32, .tolerance = lse_tolerance(dtype)},
  };
}

// A tile of queries of one (batch, kv head): up to kTileQueries (sampled row, head) pairs that
// read the same K and V rows. Looping over keys outside and queries inside fetches each key row
// once per tile instead of once per query: at s = 16384 a query row alone would stream 8 MB of
// fp64 K and V from DRAM, and the oracle would be memory-bound by two orders of magnitude.
constexpr std::int64_t kTileQueries = 64;

struct QueryRef {
  const double* q;
  double* o;
  double* lse;
  std::int64_t position;  // the query's index in the sequence (its sampled row's original index)
};

// The same arithmetic as attention_row (reference/attention.hpp), for a tile of queries;
// `logits` holds queries.size() * seq values.
void attention_tile(const std::vector<QueryRef>& queries, const double* k, const double* v, std::int64_t seq,
                    std::int64_t d, std::int64_t kv_stride, const AttentionMask& mask, double softcap,
                    std::vector<double>& logits) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const std::size_t nq = queries.size();
  std::vector<double> max_logit(nq, -INFINITY), sum(nq, 0.0);
  std::int64_t lo = seq, hi = 0;
  for (const QueryRef& u : queries) {
    lo = std::min(lo, mask.first_key(u.position));
    hi = std::max(hi, mask.end_key(u.position, seq));
    std::fill(u.o, u.o + d, 0.0);
  }
  for (std::int64_t j = lo; j < hi; ++j) {
    const double* kj = k + j * kv_stride;
    for (std::size_t u = 0; u < nq; ++u) {
      if (!mask.visible(queries[u].position, j, seq)) continue;
      const double* q = queries[u].q;
      double part[4] = {0, 0, 0, 0};  // four partial sums: no latency-bound chain of adds
      std::int64_t e = 0;
      for (; e + 4 <= d; e += 4)
        for (int w = 0; w < 4; ++w) part[w] += q[e + w] * kj[e + w];
      for (; e < d; ++e) part[0] += q[e] * kj[e];
      const double l = attention_logit(scale * ((part[0] + part[1]) + (part[2] + part[3])), softcap);
      logits[u * static_cast<std::size_t>(seq) + static_cast<std::size_t>(j)] = l;
      max_logit[u] = std::fmax(max_logit[u], l);
    }
  }
  for (std::int64_t j = lo; j < hi; ++j) {
    const double* vj = v + j * kv_stride;
    for (std::size_t u = 0; u < nq; ++u) {
      if (!mask.visible(queries[u].position, j, seq)) continue;
      const double p = std::exp(logits[u * static_cast<std::size_t>(seq) + static_cast<std::size_t>(j)] - max_logit[u]);
      sum[u] += p;
      double* o = queries[u].o;
      for (std::int64_t e = 0; e < d; ++e) o[e] += p * vj[e];
    }
  }
  for (std::size_t u = 0; u < nq; ++u) {
    for (std::int64_t e = 0; e < d; ++e) queries[u].o[e] /= sum[u];
    *queries[u].lse = max_logit[u] + std::log(sum[u]);
  }
}

// in: q [b, n, h, d] (the n sampled rows), k and v [b, seq, kvh, d] whole; out: o [b, n, h, d],
// lse [b, h, n]. rows[r] is the position of sampled row r. The true seq is K's dim 1. Tasks are
// (batch, kv head, tile of sampled rows) with all the group's query heads, handed to threads
// one at a time (causal rows differ in cost).
void attention_oracle(const Shape& s, const std::vector<std::int64_t>& rows, const std::vector<HostTensor>& in,
                      std::vector<HostTensor>& out) {
  const auto a = AttentionAxes::of(s);
  const std::int64_t n = a.seq, seq = in[1].dims[1], h = a.heads, kvh = a.kv_heads, d = a.head_dim;
  const std::int64_t group = h / kvh;
  const std::int64_t rows_per_tile = std::max<std::int64_t>(1, kTileQueries / group);
  const std::int64_t row_tiles = (n + rows_per_tile - 1) / rows_per_tile;
  const std::int64_t tasks = a.batch * kvh * row_tiles;
  const AttentionMask mask = a.mask();
  std::atomic<std::int64_t> next{0};
  auto work = [&] {
    std::vector<double> logits(static_cast<std::size_t>(rows_per_tile * group * seq));
    std::vector<QueryRef> queries;
    for (std::int64_t t = next++; t < tasks; t = next++) {
      const std::int64_t tile = t % row_tiles, kv = (t / row_tiles) % kvh, b = t / (row_tiles * kvh);
      queries.clear();
      for (std::int64_t r = tile * rows_per_tile; r < std::min(n, (tile + 1) * rows_per_tile); ++r)
        for (std::int64_t head = kv * group; head < (kv + 1) * group; ++head)
          queries.push_back({in[0].values.data() + ((b * n + r) * h + head) * d,
                             out[0].values.data() + ((b * n + r) * h + head) * d,
                             out[1].values.data() + (b * h + head) * n + r, rows[static_cast<std::size_t>(r)]});
      attention_tile(queries, in[1].values.data() + (b * seq * kvh + kv) * d,
                     in[2].values.data() + (b * seq * kvh + kv) * d, seq, d, kvh * d, mask, a.softcap, logits);
    }
  };
  const std::int64_t threads = std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1, tasks);
  std::vector<std::thread> pool;
  for (std::int64_t i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
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
