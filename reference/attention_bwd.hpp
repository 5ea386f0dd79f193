// attention's backward in fp64, by its definition: what the coming attention_bwd op's oracle will
// compute (issue: the attention family), checked now by its CPU test against finite differences of
// attention_fwd's oracle (tests/reference/attention_bwd_math_test.cpp).
//
// For query i of one (batch, query head), with the forward's logits l_ij over the keys it sees
// (reference/attention.hpp), s_ij = scale q_i . k_j the raw score and lse_i its log-sum-exp:
//   p_ij  = exp(l_ij - lse_i)
//   dp_ij = do_i . v_j
//   D_i   = sum_j p_ij dp_ij   (= do_i . o_i: FlashAttention's preprocessing, rowsum(dO * O))
//   dl_ij = p_ij (dp_ij - D_i)
//   ds_ij = dl_ij l'(s_ij)     (l' = 1 without a cap, 1 - tanh^2(s / cap) with one)
//   dq_i  = scale sum_j ds_ij k_j
//   dk_j += scale ds_ij q_i,  dv_j += p_ij do_i   (over every query head of j's kv head: GQA)
// Layout as attention_fwd's: q, o, do [batch, seq, heads, d]; k, v [batch, seq, kv_heads, d].
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "reference/attention.hpp"

namespace kwb {

struct AttentionGrads {
  std::vector<double> dq, dk, dv;  // in q's and k's layouts
};

// Per-row scratch: `seq` values each.
struct AttentionBackwardScratch {
  std::vector<double> score, prob, dprob;  // s_ij, p_ij, dp_ij
  explicit AttentionBackwardScratch(std::int64_t seq)
      : score(static_cast<std::size_t>(seq)), prob(score.size()), dprob(score.size()) {}
};

// One query row's gradients: dq_i written (d values), its terms added into dk and dv (pointers at
// key 0 of the row's kv head, rows `kv_stride` apart). Returns D_i.
inline double attention_backward_row(const double* q, const double* k, const double* v,
                                     const double* dout, double* dq, double* dk, double* dv,
                                     AttentionBackwardScratch& t, std::int64_t i, std::int64_t seq,
                                     std::int64_t d, std::int64_t kv_stride,
                                     const AttentionMask& mask, double softcap) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const std::int64_t lo = mask.first_key(i), hi = mask.end_key(i, seq);
  // t.prob holds the logits until p_ij replaces them below.
  const double max_logit =
      attention_row_logits(q, k, lo, hi, d, kv_stride, softcap, t.prob.data(), t.score.data());
  double sum = 0;
  for (std::int64_t j = lo; j < hi; ++j) sum += std::exp(t.prob[j] - max_logit);
  const double lse = max_logit + std::log(sum);
  double big_d = 0;  // D_i
  for (std::int64_t j = lo; j < hi; ++j) {
    const double* vj = v + j * kv_stride;
    double dp = 0;
    for (std::int64_t e = 0; e < d; ++e) dp += dout[e] * vj[e];
    t.prob[j] = std::exp(t.prob[j] - lse);
    t.dprob[j] = dp;
    big_d += t.prob[j] * dp;
    for (std::int64_t e = 0; e < d; ++e) dv[j * kv_stride + e] += t.prob[j] * dout[e];
  }
  for (std::int64_t e = 0; e < d; ++e) dq[e] = 0;
  for (std::int64_t j = lo; j < hi; ++j) {
    double ds = t.prob[j] * (t.dprob[j] - big_d);
    if (softcap > 0) {
      const double c = std::tanh(t.score[j] / softcap);
      ds *= 1 - c * c;
    }
    const double* kj = k + j * kv_stride;
    for (std::int64_t e = 0; e < d; ++e) {
      dq[e] += scale * ds * kj[e];
      dk[j * kv_stride + e] += scale * ds * q[e];
    }
  }
  return big_d;
}

// Every query row of every (batch, query head).
inline AttentionGrads attention_backward(const AttentionAxes& a, const double* q, const double* k,
                                         const double* v, const double* dout) {
  const std::int64_t d = a.head_dim, q_stride = a.heads * d, kv_stride = a.kv_heads * d;
  const std::int64_t group = a.heads / a.kv_heads;
  AttentionGrads g;
  g.dq.assign(static_cast<std::size_t>(a.batch * a.seq * q_stride), 0.0);
  g.dk.assign(static_cast<std::size_t>(a.batch * a.seq * kv_stride), 0.0);
  g.dv.assign(g.dk.size(), 0.0);
  AttentionBackwardScratch scratch(a.seq);
  for (std::int64_t b = 0; b < a.batch; ++b)
    for (std::int64_t h = 0; h < a.heads; ++h) {
      const std::int64_t kv =
          (b * a.seq * a.kv_heads + h / group) * d;  // key 0 of this head's kv head
      for (std::int64_t i = 0; i < a.seq; ++i) {
        const std::int64_t row = ((b * a.seq + i) * a.heads + h) * d;
        attention_backward_row(q + row, k + kv, v + kv, dout + row, g.dq.data() + row,
                               g.dk.data() + kv, g.dv.data() + kv, scratch, i, a.seq, d, kv_stride,
                               a.mask(), a.softcap);
      }
    }
  return g;
}

}  // namespace kwb
