// The paged_attention_decode oracle on the host: against the definition (attention_row over a
// contiguous copy of each sequence's keys, with the causal mask at the new tokens' positions) at
// several page sizes, q_len and grouped-query shapes; the block tables are really followed; the
// sampled sequences equal the whole answer's rows; the context lengths' stated distribution; the
// work model's bytes and FLOPs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "harness/catalogue/registry.hpp"
#include "reference/attention.hpp"
#include "reference/paged_attention_decode.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace paged_attention_decode_oracle_test {
namespace {

using paged_decode::PagedDecodeAxes;
using paged_decode::paged_decode_shape;

const Op& paged() { return registered_op(paged_decode::kOp); }

// Host inputs as a case draws them, with context_lens (derived on the device) from the formula.
std::vector<HostTensor> inputs(const Shape& s, std::uint64_t seed) {
  auto in = host_inputs(paged().tensors(s, DType::bf16), seed);
  const auto a = PagedDecodeAxes::of(s);
  for (std::int64_t b = 0; b < a.batch; ++b) in[4].values[static_cast<std::size_t>(b)] = static_cast<double>(a.length(b));
  return in;
}

// O by the definition: each (sequence, head, token) row through attention_row over the sequence's
// keys copied out of its pages in order, the query at position L - q_len + t, causal.
std::vector<double> definition(const Shape& s, const std::vector<HostTensor>& in) {
  const auto a = PagedDecodeAxes::of(s);
  const std::int64_t d = a.head_dim, pps = a.pages_per_seq();
  std::vector<double> o(static_cast<std::size_t>(a.batch * a.q_len * a.heads * d));
  for (std::int64_t b = 0; b < a.batch; ++b) {
    const auto length = static_cast<std::int64_t>(in[4].values[static_cast<std::size_t>(b)]);
    for (std::int64_t head = 0; head < a.heads; ++head) {
      const std::int64_t kv = head / a.group();
      std::vector<double> k(static_cast<std::size_t>(length * d)), v(k.size()), logits(static_cast<std::size_t>(length));
      for (std::int64_t j = 0; j < length; ++j) {
        const auto page = static_cast<std::int64_t>(in[3].values[static_cast<std::size_t>(b * pps + j / a.page_size)]);
        const std::int64_t row = ((page * a.page_size + j % a.page_size) * a.kv_heads + kv) * d;
        for (std::int64_t e = 0; e < d; ++e) {
          k[static_cast<std::size_t>(j * d + e)] = in[1].values[static_cast<std::size_t>(row + e)];
          v[static_cast<std::size_t>(j * d + e)] = in[2].values[static_cast<std::size_t>(row + e)];
        }
      }
      for (std::int64_t t = 0; t < a.q_len; ++t) {
        const std::int64_t at = ((b * a.q_len + t) * a.heads + head) * d;
        attention_row(in[0].values.data() + at, k.data(), v.data(), o.data() + at, logits.data(),
                      length - a.q_len + t, length, d, d, AttentionMask{.causal = true}, 0.0);
      }
    }
  }
  return o;
}

double max_abs_difference(const std::vector<double>& x, const std::vector<double>& y) {
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::fabs(x[i] - y[i]));
  return worst;
}

TEST(PagedDecodeOracle, EqualsTheDefinitionOverEachSequencesPagesInOrder) {
  // Pages of 1, 7 and 16 tokens; q_len 1, 2 and 3; MHA, GQA and MQA; equal and ragged lengths.
  for (const Shape& s : {paged_decode_shape(3, 1, 40, 4, 2, 64, 16), paged_decode_shape(2, 3, 9, 4, 1, 64, 1, "ragged"),
                         paged_decode_shape(4, 2, 61, 2, 2, 128, 7, "ragged")}) {
    const auto in = inputs(s, 11);
    const auto out = run_oracle(paged(), s, in);
    EXPECT_LT(max_abs_difference(out[0].values, definition(s, in)), 1e-12) << s.to_compact();
  }
}

TEST(PagedDecodeOracle, FollowsTheBlockTablesNotThePoolOrder) {
  // With the shuffled tables replaced by the identity, the answer must change: an oracle that read
  // sequence b's tokens from pages b * pps .. would pass the first test only by luck of the draw.
  const Shape s = paged_decode_shape(3, 1, 48, 2, 1, 64, 16);
  auto in = inputs(s, 5);
  const auto shuffled = run_oracle(paged(), s, in);
  std::iota(in[3].values.begin(), in[3].values.end(), 0.0);
  const auto in_order = run_oracle(paged(), s, in);
  EXPECT_GT(max_abs_difference(shuffled[0].values, in_order[0].values), 1e-3);
  EXPECT_LT(max_abs_difference(in_order[0].values, definition(s, in)), 1e-12);
}

TEST(PagedDecodeOracle, SampledSequencesEqualTheWholeAnswersRows) {
  // The verifier hands the oracle the sampled sequences' rows of q, block_tables and context_lens
  // and the whole cache; each sequence is self-contained, so its rows match the whole answer's.
  const Shape whole = paged_decode_shape(5, 2, 70, 4, 2, 64, 16, "ragged");
  const auto in = inputs(whole, 9);
  const auto all = run_oracle(paged(), whole, in);
  const std::vector<std::int64_t> picked = {4, 1};
  const auto a = PagedDecodeAxes::of(whole);
  const std::int64_t q_row = a.q_len * a.heads * a.head_dim, pps = a.pages_per_seq();
  std::vector<HostTensor> sub = in;
  for (int i : {0, 3, 4}) {
    const std::int64_t width = i == 0 ? q_row : i == 3 ? pps : 1;
    sub[static_cast<std::size_t>(i)].dims[0] = static_cast<std::int64_t>(picked.size());
    sub[static_cast<std::size_t>(i)].values.clear();
    for (std::int64_t b : picked)
      for (std::int64_t e = 0; e < width; ++e)
        sub[static_cast<std::size_t>(i)].values.push_back(in[static_cast<std::size_t>(i)].values[static_cast<std::size_t>(b * width + e)]);
  }
  const Shape two = paged_decode_shape(2, 2, 70, 4, 2, 64, 16, "ragged");
  const auto part = run_oracle(paged(), two, sub);
  for (std::size_t i = 0; i < picked.size(); ++i)
    for (std::int64_t e = 0; e < q_row; ++e)
      ASSERT_EQ(part[0].values[static_cast<std::size_t>(static_cast<std::int64_t>(i) * q_row + e)],
                all[0].values[static_cast<std::size_t>(picked[i] * q_row + e)])
          << "sequence " << picked[i] << " element " << e;
}

TEST(PagedDecodeOracle, FillsTheErrorMagnitudesOfItsBound) {
  // sum_j p_j |v_je| is at least |o_e| and at most max |v|; R is positive.
  const Shape s = paged_decode_shape(2, 1, 33, 2, 2, 64, 8);
  const auto in = inputs(s, 3);
  const auto out = run_oracle(paged(), s, in);
  ASSERT_EQ(out[0].abs_sum.size(), out[0].values.size());
  const double max_v = std::fabs(*std::max_element(in[2].values.begin(), in[2].values.end(),
                                                   [](double x, double y) { return std::fabs(x) < std::fabs(y); }));
  for (std::size_t e = 0; e < out[0].values.size(); ++e) {
    EXPECT_GE(out[0].abs_sum[e], std::fabs(out[0].values[e]) - 1e-12);
    EXPECT_LE(out[0].abs_sum[e], max_v + 1e-12);
    EXPECT_GT(out[0].root_sum_sq[e], 0.0);
  }
}

TEST(PagedDecodeLengths, EqualIsTheContextAndRaggedSpreadsOverTheUpperThreeQuarters) {
  EXPECT_EQ(paged_decode::context_length(7, 4096, 1, false), 4096);
  const std::int64_t context = 8192, batch = 256;
  std::vector<std::int64_t> lengths;
  for (std::int64_t b = 0; b < batch; ++b) lengths.push_back(paged_decode::context_length(b, context, 1, true));
  EXPECT_EQ(lengths[0], context);  // the longest sequence is always there: the cache's size is real
  for (std::int64_t l : lengths) {
    EXPECT_GT(l, context / 4);
    EXPECT_LE(l, context);
  }
  const double mean = std::accumulate(lengths.begin(), lengths.end(), 0.0) / batch;
  EXPECT_NEAR(mean / context, 0.625, 0.01);  // uniform over (1/4, 1]
  // Evenly spread: every eighth of the range holds its share (32 of 256) give or take 3.
  for (int bin = 0; bin < 8; ++bin) {
    const double lo = context * (0.25 + 0.75 * bin / 8), hi = context * (0.25 + 0.75 * (bin + 1) / 8);
    const auto count = std::count_if(lengths.begin(), lengths.end(), [&](std::int64_t l) { return l > lo && l <= hi; });
    EXPECT_NEAR(static_cast<double>(count), 32.0, 3.0) << "bin " << bin;
  }
  // Never below q_len, so every query token is in its own cache.
  for (std::int64_t b = 0; b < 64; ++b) EXPECT_GE(paged_decode::context_length(b, 6, 5, true), 5);
}

TEST(PagedDecodeWork, CountsTheKeysEachSequenceHoldsNotThePool) {
  // b2 q2 ctx20 h4/2 d64 page 16, bf16: lengths 20 and 20 - floor(3 * 20 * f_1 / 4) (ragged).
  const Shape s = paged_decode_shape(2, 2, 20, 4, 2, 64, 16, "ragged");
  const std::int64_t l0 = paged_decode::context_length(0, 20, 2, true), l1 = paged_decode::context_length(1, 20, 2, true);
  ASSERT_EQ(l0, 20);
  ASSERT_LT(l1, 20);
  const WorkModel w = paged().work(s, DType::bf16);
  const double kv = 2.0 * static_cast<double>(l0 + l1) * 2 * 64 * 2;        // K and V, 2 kv heads, 2 bytes
  const double qo = 2.0 * 2 * 2 * 4 * 64 * 2;                               // q and o
  const double tables = 4.0 * static_cast<double>((l0 + 15) / 16 + (l1 + 15) / 16) + 4.0 * 2;
  EXPECT_DOUBLE_EQ(w.bytes, kv + qo + tables);
  // Pairs per head: query t at L - 2 + t sees L - 1 + t keys: 2 L - 1 in all.
  EXPECT_DOUBLE_EQ(w.flops, 4.0 * 4 * 64 * static_cast<double>((2 * l0 - 1) + (2 * l1 - 1)));
}

}  // namespace
}  // namespace paged_attention_decode_oracle_test
}  // namespace kwb
