// paged_attention_decode's contract, shared by its oracle, its kernels and their tests: the axes,
// where a token's key and value sit in the paged cache, and each sequence's context length.
//
// The KV cache is a pool of fixed-size pages, k_cache and v_cache [pages, page_size, kv_heads, d],
// as vLLM and FlashInfer keep it. Sequence b owns the pages block_tables[b][0 .. ceil(L_b / P))
// in that order (P = page_size): its token j lives in page block_tables[b][j / P] at slot j % P.
// The pool holds batch * pages_per_seq pages, pages_per_seq = ceil(context / P), and the block
// tables are a random permutation of them: the shuffled order an allocator leaves after many
// sequences have come and gone, so that no kernel may assume a sequence's pages are adjacent.
//
// Each sequence holds L_b tokens (its context length, the new ones included); its q_len newest
// tokens are the queries: query t (0 <= t < q_len) sits at position L_b - q_len + t and sees keys
// j <= that position (causal among the new tokens; q_len 1 is plain decoding, 2-8 speculative
// decoding's verification step). Grouped-query heads: query head h reads kv head h / (heads /
// kv_heads).
#pragma once

#include <cstdint>
#include <string>

#include "harness/catalogue/types.hpp"
#include "reference/ragged_lengths.hpp"

#if defined(__CUDACC__)
#define KWB_PAGED_HD __host__ __device__
#else
#define KWB_PAGED_HD
#endif

namespace kwb {
namespace paged_decode {

inline constexpr const char* kOp = "paged_attention_decode";

// Context lengths, a choice axis: "equal" gives every sequence `context` tokens; "ragged" draws
// them uniform over (context / 4, context] (ragged_length, reference/ragged_lengths.hpp), never
// below q_len; sequence 0 always holds `context`.
KWB_PAGED_HD inline std::int64_t context_length(std::int64_t b, std::int64_t context, std::int64_t q_len, bool ragged) {
  if (!ragged) return context;
  const std::int64_t length = ragged_length(b, context);
  return length > q_len ? length : q_len;
}

struct PagedDecodeAxes {
  std::int64_t batch = 0, q_len = 0, context = 0, heads = 0, kv_heads = 0, head_dim = 0, page_size = 0;
  bool ragged = false;

  static PagedDecodeAxes of(const Shape& s) {
    return {.batch = s.at("batch"),
            .q_len = s.at("q_len"),
            .context = s.at("context"),
            .heads = s.at("heads"),
            .kv_heads = s.at("kv_heads"),
            .head_dim = s.at("head_dim"),
            .page_size = s.at("page_size"),
            .ragged = s.choice("lengths") == "ragged"};
  }
  std::int64_t pages_per_seq() const { return (context + page_size - 1) / page_size; }
  std::int64_t pages() const { return batch * pages_per_seq(); }
  std::int64_t group() const { return heads / kv_heads; }
  std::int64_t length(std::int64_t b) const { return context_length(b, context, q_len, ragged); }
};

inline Shape paged_decode_shape(std::int64_t batch, std::int64_t q_len, std::int64_t context, std::int64_t heads,
                                std::int64_t kv_heads, std::int64_t head_dim, std::int64_t page_size,
                                const char* lengths = "equal") {
  return Shape{{{"batch", batch}, {"q_len", q_len}, {"context", context}, {"heads", heads}, {"kv_heads", kv_heads},
                {"head_dim", head_dim}, {"page_size", page_size}, {"lengths", lengths}}};
}

// Offset in elements of token j's row (d values) of kv head `kv` in a cache whose sequence owns
// the pages `table` (its row of block_tables).
KWB_PAGED_HD inline std::int64_t cache_row(const std::int32_t* table, std::int64_t j, std::int64_t page_size,
                                           std::int64_t kv_heads, std::int64_t kv, std::int64_t d) {
  const std::int64_t page = table[j / page_size];
  return ((page * page_size + j % page_size) * kv_heads + kv) * d;
}

}  // namespace paged_decode
}  // namespace kwb
