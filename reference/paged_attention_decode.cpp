// paged_attention_decode: attention of a batch of sequences' newest tokens (q_len of them, 1 when
// decoding) over their whole context, read from a paged KV cache through block tables
// (reference/paged_attention_decode.hpp holds the layout, the context lengths and the mask).
//
// Layout: q and o [b, q_len, h, d] in the case dtype; k_cache and v_cache [pages, page_size,
// kv_heads, d] in the case dtype; block_tables [b, pages_per_seq] and context_lens [b] in int32.
// Scale 1 / sqrt(d); no soft-cap or window. bf16 and fp16 only, as attention_fwd.
//
// Work model. Decoding is memory-bound: each sequence's keys and values are read once for q_len
// queries per head, so FLOPs per byte of KV are about heads / kv_heads (4 for Llama-3-8B's h32/8, 1
// for MHA), far under any GPU's ridge point. Bytes: the K and V rows of the L_b tokens each sequence
// holds (not the pool's unused slots), q and o once, the block-table entries of the pages in use
// and the lengths. FLOPs: 4 h d per visible (query, key) pair, as attention_fwd counts them,
// q_len L_b - q_len (q_len - 1) / 2 pairs per head of sequence b. At b32 ctx4096 h32/8 d128 bf16
// that is 537 MB of KV: ~170 us at 3.2 TB/s, the target being >= 80% of the DRAM roof.
//
// Verification samples along `batch` (q, block_tables, context_lens and o are sampled by row; the
// cache stays whole). Each sequence is self-contained, so the oracle needs no positions: it reads
// the lengths and tables it is given, gathers the sequence's K and V rows from the pages in fp64,
// and runs attention's tile arithmetic (reference/attention_tile.hpp) with the causal mask at the
// queries' positions L_b - q_len + t. O's bound is attention_fwd's (attention_output_tolerance):
// the kernels round P to the dtype (the flash-decoding kernels' tensor-core operand, the eager
// baseline's P) and, the baseline, the raw scores; they accumulate in fp32 (split-KV's partial
// outputs and their combine included: at most a few adds per 64 keys, inside the bound's
// 2 K / 16 + K / 64 fp32 roundings).
//
// Inputs: q and keys ~ N(0, 1.5) (peaky attention, as attention_fwd), values ~ N(0, 1); the block
// tables a random permutation of the pool's pages; the lengths derived on the device from the
// shape (paged_decode::context_length), so that every variant and the oracle read one tensor.
#include "reference/paged_attention_decode.hpp"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/attention_tile.hpp"
#include "reference/paged_attention_decode_lengths_gpu.hpp"

namespace kwb {
namespace {

using paged_decode::PagedDecodeAxes;
using paged_decode::paged_decode_shape;

std::vector<TensorSpec> paged_decode_tensors(const Shape& s, DType dtype) {
  const auto a = PagedDecodeAxes::of(s);
  const auto qk_init = Distribution::normal(0.0, 1.5);
  const std::vector<std::int64_t> q_dims = {a.batch, a.q_len, a.heads, a.head_dim};
  const std::vector<std::int64_t> cache_dims = {a.pages(), a.page_size, a.kv_heads, a.head_dim};
  return {
      {.name = "q", .dims = q_dims, .sample_dim = 0, .init = qk_init},
      {.name = "k_cache", .dims = cache_dims, .init = qk_init},
      {.name = "v_cache", .dims = cache_dims, .init = Distribution::normal(0.0, 1.0)},
      {.name = "block_tables", .dims = {a.batch, a.pages_per_seq()}, .sample_dim = 0,
       .init = Distribution::permutation(), .elem = ElemType::int32},
      {.name = "context_lens", .dims = {a.batch}, .sample_dim = 0, .init = Distribution::derived(),
       .elem = ElemType::int32},
      {.name = "o", .dims = q_dims, .is_output = true, .sample_dim = 0,
       .tolerance = attention_output_tolerance(a.context, dtype)},
  };
}

WorkModel paged_decode_work(const Shape& s, DType dtype) {
  const auto a = PagedDecodeAxes::of(s);
  const double e = static_cast<double>(dtype_size(dtype));
  const double qo = 2.0 * static_cast<double>(a.batch * a.q_len * a.heads * a.head_dim) * e;
  double keys = 0, table_entries = 0, pairs = 0;
  for (std::int64_t b = 0; b < a.batch; ++b) {
    const std::int64_t length = a.length(b);
    keys += static_cast<double>(length);
    table_entries += static_cast<double>((length + a.page_size - 1) / a.page_size);
    pairs += static_cast<double>(a.q_len * length - a.q_len * (a.q_len - 1) / 2);
  }
  const double kv = 2.0 * keys * static_cast<double>(a.kv_heads * a.head_dim) * e;
  const double bytes = qo + kv + 4.0 * (table_entries + static_cast<double>(a.batch));
  return WorkModel{bytes, 4.0 * static_cast<double>(a.heads * a.head_dim) * pairs};
}

// in: q [n, q_len, h, d], k_cache and v_cache [pages, P, kvh, d] whole, block_tables [n, pps] and
// context_lens [n] (the n sampled sequences); out: o [n, q_len, h, d]. Tasks are (sequence, kv
// head), handed to threads one at a time (lengths differ).
void paged_decode_oracle(const Shape& s, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
  const auto a = PagedDecodeAxes::of(s);
  const std::int64_t n = a.batch, h = a.heads, kvh = a.kv_heads, d = a.head_dim, group = a.group();
  const std::int64_t pages_per_seq = in[3].dims[1];
  const auto& q = in[0].values;
  const auto& k_cache = in[1].values;
  const auto& v_cache = in[2].values;
  const auto& tables = in[3].values;
  const auto& lengths = in[4].values;
  HostTensor& o = out[0];
  o.abs_sum.assign(o.values.size(), 0.0);
  o.root_sum_sq.assign(o.values.size(), 0.0);
  const AttentionMask causal{.causal = true};
  const std::int64_t tasks = n * kvh;
  std::atomic<std::int64_t> next{0};
  auto work = [&] {
    std::vector<double> k, v, logits, sensitivity, moments(static_cast<std::size_t>(kTileQueries * 2 * d));
    std::vector<double> lse(static_cast<std::size_t>(kTileQueries)), lse_rss(lse.size());
    std::vector<std::int32_t> table(static_cast<std::size_t>(pages_per_seq));
    std::vector<QueryRef> queries;
    for (std::int64_t task = next++; task < tasks; task = next++) {
      const std::int64_t b = task / kvh, kv = task % kvh;
      const auto length = static_cast<std::int64_t>(lengths[static_cast<std::size_t>(b)]);
      for (std::int64_t p = 0; p < pages_per_seq; ++p)
        table[static_cast<std::size_t>(p)] = static_cast<std::int32_t>(tables[static_cast<std::size_t>(b * pages_per_seq + p)]);
      // The sequence's keys and values, gathered from its pages into [length, d].
      k.resize(static_cast<std::size_t>(length * d));
      v.resize(k.size());
      for (std::int64_t j = 0; j < length; ++j) {
        const std::int64_t row = paged_decode::cache_row(table.data(), j, a.page_size, kvh, kv, d);
        std::copy_n(k_cache.begin() + row, d, k.begin() + j * d);
        std::copy_n(v_cache.begin() + row, d, v.begin() + j * d);
      }
      // Its group's query heads and new tokens, in tiles of at most kTileQueries.
      std::vector<std::pair<std::int64_t, std::int64_t>> rows;  // (head, token)
      for (std::int64_t head = kv * group; head < (kv + 1) * group; ++head)
        for (std::int64_t t = 0; t < a.q_len; ++t) rows.emplace_back(head, t);
      for (std::size_t first = 0; first < rows.size(); first += kTileQueries) {
        const std::size_t count = std::min<std::size_t>(kTileQueries, rows.size() - first);
        queries.clear();
        for (std::size_t u = 0; u < count; ++u) {
          const auto [head, t] = rows[first + u];
          const std::int64_t at = ((b * a.q_len + t) * h + head) * d;
          queries.push_back({q.data() + at, o.values.data() + at, &lse[u], length - a.q_len + t,
                             o.abs_sum.data() + at, o.root_sum_sq.data() + at, &lse_rss[u]});
        }
        logits.resize(count * static_cast<std::size_t>(length));
        sensitivity.resize(logits.size());
        attention_tile(queries, k.data(), v.data(), length, d, d, causal, 0.0, logits, sensitivity, moments);
      }
    }
  };
  const std::int64_t threads = std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1, tasks);
  std::vector<std::thread> pool;
  for (std::int64_t i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
}

std::optional<std::string> paged_decode_invalid(const Shape& s) {
  const auto a = PagedDecodeAxes::of(s);
  if (a.batch < 1 || a.heads < 1 || a.kv_heads < 1 || a.page_size < 1)
    return "batch, heads, kv_heads and page_size must be at least 1";
  if (a.q_len < 1 || a.context < a.q_len) return "q_len must be at least 1 and at most context";
  if (a.heads % a.kv_heads != 0) return "kv_heads must divide heads (grouped-query attention)";
  if (a.head_dim != 64 && a.head_dim != 128) return "head_dim must be 64 or 128";
  if (a.context > (std::int64_t{1} << 30) || a.page_size > a.context + (std::int64_t{1} << 20))
    return "context must be at most 2^30 tokens and page_size at most context + 2^20 (int32 positions)";
  if (a.pages() > (std::int64_t{1} << 31) - 1) return "the pool must hold fewer than 2^31 pages (int32 block tables)";
  return std::nullopt;
}

// Llama-3-8B's decode heads (h32/8, d128) with vLLM's default page of 16 tokens: the issue's
// context >= 4096 at batch 32 and 8, long single sequences, ragged lengths at large batch,
// speculative decoding's q_len 4, multi-head (h32/32) and d64 with 64-token pages. The first,
// b24 ctx5000 (a context no page or tile divides), is the catalogue's example: its axis values
// are distinct, so the page names every tensor's dims by their axes.
std::vector<Shape> paged_decode_default_shapes() {
  return {
      paged_decode_shape(24, 1, 5000, 32, 8, 128, 16),
      paged_decode_shape(32, 1, 4096, 32, 8, 128, 16),
      paged_decode_shape(8, 1, 16384, 32, 8, 128, 16),
      paged_decode_shape(64, 1, 8192, 32, 8, 128, 16, "ragged"),
      paged_decode_shape(128, 1, 2048, 32, 8, 128, 16, "ragged"),
      paged_decode_shape(16, 4, 8192, 32, 8, 128, 16, "ragged"),
      paged_decode_shape(32, 1, 4096, 32, 32, 128, 16),
      paged_decode_shape(64, 1, 4096, 16, 2, 64, 64),
      paged_decode_shape(1, 1, 32768, 32, 8, 128, 256),
  };
}

// One token (one slot of one page), exactly one page, one past a page, a page of 1 token and one
// of 7 (no power of two), q_len above 1 with ragged lengths clamped to it, query rows past one
// 16-row tile (h16/4 x q_len 8 = 32 rows a kv head: two tiles in a block), past two (h32/4 x q_len
// 5 = 40 rows: a second block along the rows, whose second tile is all padding), long odd
// contexts, multi-query (kv_heads 1).
std::vector<Shape> paged_decode_edge_shapes() {
  return {
      paged_decode_shape(1, 1, 1, 1, 1, 64, 16),           paged_decode_shape(2, 1, 16, 2, 1, 64, 16),
      paged_decode_shape(3, 1, 17, 4, 2, 128, 16, "ragged"), paged_decode_shape(2, 3, 5, 8, 2, 128, 1, "ragged"),
      paged_decode_shape(5, 2, 300, 3, 1, 64, 7, "ragged"),  paged_decode_shape(1, 1, 4099, 8, 8, 128, 32),
      paged_decode_shape(4, 8, 129, 16, 4, 128, 64, "ragged"), paged_decode_shape(3, 1, 1000, 64, 8, 128, 16),
      paged_decode_shape(2, 5, 100, 32, 4, 64, 16, "ragged"),
  };
}

KWB_REGISTER_OP(Op{
    .name = paged_decode::kOp,
    .description = "paged attention decode: O = softmax(Q K^T / sqrt(d)) V for each sequence's q_len newest "
                   "tokens over its context, K and V read from a paged cache through block tables (shuffled "
                   "pages), grouped-query heads",
    .axes = {{"batch", 32, {}, "sequences", {}, "b"},
             {"q_len", 1, {}, "new tokens per sequence (1: decoding; 2-8: speculative decoding), causal among them",
              {}, "q"},
             {"context", 4096, {}, "tokens in the longest sequence's cache (its new ones included)", {}, "ctx"},
             {"heads", 32, {}, "query heads", {}, "h"},
             {"kv_heads", 8, {}, "key/value heads; divides heads (grouped-query attention)", {}, "/"},
             {"head_dim", 128, {}, "d: 64 or 128", {}, "d"},
             {"page_size", 16, {}, "tokens per page of the cache", {}, "page"},
             {"lengths", 0, {}, "context lengths: equal (all `context`) or ragged (uniform over (context/4, context])",
              {"equal", "ragged"}}},
    .dtypes = {DType::bf16, DType::fp16},
    .tensors = paged_decode_tensors,
    .work = paged_decode_work,
    .oracle = paged_decode_oracle,
    .derive_inputs = ref::paged_decode_derive_lengths,
    .sample_axis = "batch",
    .compute_unit = "tensor",
    .default_shapes = paged_decode_default_shapes(),
    .edge_shapes = paged_decode_edge_shapes(),
    .invalid = paged_decode_invalid,
});

}  // namespace
}  // namespace kwb
