// The fp64 arithmetic of attention's oracles on a tile of queries that read the same K and V rows
// (reference/attention.cpp defines it; attention_fwd's oracle and paged_attention_decode's share
// it), and the error bound of an attention output that follows from it.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/catalogue/registry.hpp"
#include "reference/attention.hpp"

namespace kwb {

// A tile of queries of one (batch, kv head): up to kTileQueries (row, head) pairs that read the
// same K and V rows. Looping over keys outside and queries inside fetches each key row once per
// tile instead of once per query: at s = 16384 a query row alone would stream 8 MB of fp64 K and
// V from DRAM, and the oracle would be memory-bound by two orders of magnitude.
constexpr std::int64_t kTileQueries = 64;

struct QueryRef {
  const double* q;
  double* o;
  double* lse;
  std::int64_t position;  // the query's index in the sequence (its sampled row's original index)
  double* o_abs_sum;      // d values: sum_j p_j |v_je|
  double* o_root_sum_sq;  // d values: sqrt(sum_j p_j^2 (v_je^2 + g_j^2 (v_je - o_e)^2))
  double* lse_root_sum_sq;  // sqrt(sum_j (p_j g_j)^2)
  // Block-sparse attention: the query's row of the block mask (key block j / block kept where
  // nonzero), or null: every key the mask lets it see.
  const double* kept_blocks = nullptr;
  std::int64_t block = 0;

  bool sees(const AttentionMask& mask, std::int64_t j, std::int64_t seq) const {
    return mask.visible(position, j, seq) && (!kept_blocks || kept_blocks[j / block] != 0);
  }
};

// The same arithmetic as attention_row (reference/attention.hpp), for a tile of queries, plus
// the error magnitudes of attention_output_tolerance; k and v point at key 0 of the kv head, rows
// `kv_stride` values apart; `logits` and `sensitivity` hold queries.size() * seq values, `moments`
// 2 * d per query. A query that sees no key (every block of its row masked) gets O = 0, lse = -inf
// and zero magnitudes, as FlexAttention defines it. R of O expands as sum p^2 v^2 (1 + g^2) - 2 o sum p^2 g^2 v + o^2 sum p^2 g^2
// so that one pass over the keys (o is known only at its end) gives it.
void attention_tile(const std::vector<QueryRef>& queries, const double* k, const double* v, std::int64_t seq,
                    std::int64_t d, std::int64_t kv_stride, const AttentionMask& mask, double softcap,
                    std::vector<double>& logits, std::vector<double>& sensitivity, std::vector<double>& moments);

// The fp64 outputs of attention_oracle_rows, in its layouts (see there).
struct AttentionOracleOut {
  double* o;
  double* lse;
  double* o_abs_sum;
  double* o_root_sum_sq;
  double* lse_root_sum_sq;
};

// A block mask [batch, heads, blocks, blocks] over (query block, key block), nonzero where kept
// (block_sparse_attention_fwd's, reference/block_sparse_attention.hpp).
struct BlockMaskView {
  const double* kept = nullptr;
  std::int64_t block = 0, blocks = 0;
};

// attention_fwd's oracle on raw arrays: q [a.batch, a.seq, h, d] holding the rows at positions
// rows[0 .. a.seq) of sequences of `seq` keys, k and v [a.batch, seq, kv_heads, d]; out o like q,
// lse [a.batch, h, a.seq], and their error magnitudes (attention_output_tolerance's and
// attention_lse_tolerance's). With a block mask, a query also needs its key's block kept. On the
// worker's GPU where that pays (no block mask), else threaded on the host.
void attention_oracle_rows(const AttentionAxes& a, const std::int64_t* rows, std::int64_t seq, const double* q,
                           const double* k, const double* v, const AttentionOracleOut& out,
                           const BlockMaskView& blocks = {});

// The error bound of an attention output O in `dtype` whose rows see at most `max_keys` keys, for
// kernels that round P (and, the eager baselines, the raw scores) to the dtype and accumulate
// P V in fp32 on the tensor cores (reference/attention.cpp says which rounding each term covers).
Tolerance attention_output_tolerance(std::int64_t max_keys, DType dtype);
// The bound of its log-sum-exp (fp32, from fp32 row sums).
Tolerance attention_lse_tolerance(std::int64_t max_keys, DType dtype);

}  // namespace kwb
