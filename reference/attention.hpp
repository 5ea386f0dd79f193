// attention_fwd's formulas in fp64, shared by the oracle and its CPU tests: which keys a query
// sees, the logits, and one query row's output and log-sum-exp.
//
// For query i and key j of one (batch, head), with d = head_dim, scale = 1 / sqrt(d):
//   s_ij   = scale * q_i . k_j
//   l_ij   = s_ij                           (softcap 0)
//          = cap * tanh(s_ij / cap)         (softcap cap > 0: Gemma 2's logit soft-cap)
//   visible(i, j): j < seq, and
//     causal:                 j <= i
//     window w > 0, causal:   i - w < j <= i        (w keys, the query's own included)
//     window w > 0, no causal: |i - j| < w          (a symmetric band of 2w - 1 keys)
//   In FlashAttention's terms, window w is window_size = (w - 1, 0) with causal and
//   (w - 1, w - 1) without; window 0 is (-1, -1), no window.
//   lse_i  = log sum_{j visible} exp(l_ij)                 (natural log, as FlashAttention saves it)
//   o_i    = sum_{j visible} exp(l_ij - lse_i) v_j
// Queries and keys share one sequence (self-attention, seq_q = seq_k), so query i always sees key
// i: no row is empty. Grouped-query heads: query head h reads kv head h / (heads / kv_heads).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "harness/catalogue/types.hpp"

namespace kwb {

struct AttentionMask {
  bool causal = false;
  std::int64_t window = 0;  // 0: none

  // First and one-past-last key query i sees in a sequence of `seq` keys.
  std::int64_t first_key(std::int64_t i) const { return window > 0 ? (i - window + 1 > 0 ? i - window + 1 : 0) : 0; }
  std::int64_t end_key(std::int64_t i, std::int64_t seq) const {
    std::int64_t end = seq;
    if (causal) end = i + 1;
    else if (window > 0) end = i + window;
    return end < seq ? end : seq;
  }
  bool visible(std::int64_t i, std::int64_t j, std::int64_t seq) const {
    return j >= first_key(i) && j < end_key(i, seq);
  }
  // The other way round, for a backward's dK and dV: the queries that see key j, [first, end).
  std::int64_t first_query(std::int64_t j) const {
    if (causal) return j;
    return window > 0 ? (j - window + 1 > 0 ? j - window + 1 : 0) : 0;
  }
  std::int64_t end_query(std::int64_t j, std::int64_t seq) const {
    const std::int64_t end = window > 0 ? j + window : seq;
    return end < seq ? end : seq;
  }
  // Visible (query, key) pairs of one (batch, head): the work model's count.
  double visible_pairs(std::int64_t seq) const {
    double pairs = 0;
    for (std::int64_t i = 0; i < seq; ++i) pairs += static_cast<double>(end_key(i, seq) - first_key(i));
    return pairs;
  }
};

// The axes of an attention_fwd case, read once: AttentionAxes::of(a.shape).
struct AttentionAxes {
  std::int64_t batch = 0, seq = 0, heads = 0, kv_heads = 0, head_dim = 0;
  std::int64_t window = 0;  // 0: none
  bool causal = false;
  double softcap = 0;  // 0: none

  static AttentionAxes of(const Shape& s) {
    return {.batch = s.at("batch"),
            .seq = s.at("seq"),
            .heads = s.at("heads"),
            .kv_heads = s.at("kv_heads"),
            .head_dim = s.at("head_dim"),
            .window = s.at("window"),
            .causal = s.choice("causal") == "1",
            .softcap = std::stod(s.choice("softcap"))};
  }
  AttentionMask mask() const { return {causal, window}; }
  // The most keys one query sees: the K of the output's reduction.
  std::int64_t max_keys() const {
    std::int64_t keys = seq;
    if (window > 0) keys = std::min(keys, causal ? window : 2 * window - 1);
    return keys;
  }
};

inline Shape attention_shape(std::int64_t batch, std::int64_t seq, std::int64_t heads, std::int64_t kv_heads,
                             std::int64_t head_dim, const char* causal, std::int64_t window = 0,
                             const char* softcap = "0") {
  return Shape{{{"batch", batch}, {"seq", seq}, {"heads", heads}, {"kv_heads", kv_heads}, {"head_dim", head_dim},
                {"causal", causal}, {"window", window}, {"softcap", softcap}}};
}

inline double attention_logit(double score, double softcap) {
  return softcap > 0 ? softcap * std::tanh(score / softcap) : score;
}

// How much a logit moves per relative error of its raw score s (the scaled q . k): s l'(s),
// which is s without a cap and s (1 - tanh^2(s / cap)) with one. An implementation that stores s
// rounded to the dtype (the eager baseline's S = Q K^T) moves logit j by up to u |g_j|; a logit
// scale off by a factor (1 + e) moves it by e g_j. The oracle's error magnitudes weigh each key by it.
inline double attention_logit_sensitivity(double score, double softcap) {
  if (softcap <= 0) return score;
  const double t = std::tanh(score / softcap);
  return score * (1 - t * t);
}

// Query q's logits l_j over keys [lo, hi) into logits[j], and its raw scores s_j = scale q . k_j into
// score[j] when given (k points at key 0, rows `kv_stride` apart). Returns the largest logit.
inline double attention_row_logits(const double* q, const double* k, std::int64_t lo, std::int64_t hi, std::int64_t d,
                                   std::int64_t kv_stride, double softcap, double* logits, double* score = nullptr) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  double max_logit = -INFINITY;
  for (std::int64_t j = lo; j < hi; ++j) {
    const double* kj = k + j * kv_stride;
    double dot = 0;
    for (std::int64_t e = 0; e < d; ++e) dot += q[e] * kj[e];
    if (score) score[j] = scale * dot;
    logits[j] = attention_logit(scale * dot, softcap);
    max_logit = std::fmax(max_logit, logits[j]);
  }
  return max_logit;
}

// One query row, the definition (the registered oracle runs the same arithmetic on tiles of
// queries, reference/attention.cpp): q and o hold d values; k and v point at key 0 of the row's kv head, rows
// `kv_stride` values apart; logits is scratch for `seq` values. Returns lse_i.
inline double attention_row(const double* q, const double* k, const double* v, double* o, double* logits,
                            std::int64_t i, std::int64_t seq, std::int64_t d, std::int64_t kv_stride,
                            const AttentionMask& mask, double softcap) {
  const std::int64_t lo = mask.first_key(i), hi = mask.end_key(i, seq);
  const double max_logit = attention_row_logits(q, k, lo, hi, d, kv_stride, softcap, logits);
  double sum = 0;
  for (std::int64_t e = 0; e < d; ++e) o[e] = 0;
  for (std::int64_t j = lo; j < hi; ++j) {
    const double p = std::exp(logits[j] - max_logit);
    sum += p;
    const double* vj = v + j * kv_stride;
    for (std::int64_t e = 0; e < d; ++e) o[e] += p * vj[e];
  }
  for (std::int64_t e = 0; e < d; ++e) o[e] /= sum;
  return max_logit + std::log(sum);
}

}  // namespace kwb
