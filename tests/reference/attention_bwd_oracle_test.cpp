// attention_bwd's registered oracle (reference/attention_bwd_op.cpp): with O and lse the forward's,
// its dq, dk and dv equal the backward by definition (reference/attention_bwd.hpp, itself held to
// finite differences of attention_fwd's oracle), under every mask, the soft-cap and grouped heads;
// at sampled positions it gives exactly the rows of the whole answer (dq at query rows, dk and dv
// at key rows, every input read whole); and its error magnitudes bound what they must (A at least
// |value| and R, the two sums' definitions).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "reference/attention.hpp"
#include "reference/attention_bwd.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace attention_bwd_oracle_test {
namespace {

const Op& backward() { return registered_op("attention_bwd"); }

// q, k, v, o, lse, do with o and lse from attention_fwd's oracle on q, k, v.
std::vector<HostTensor> consistent_inputs(const Shape& s, std::uint64_t seed) {
  auto in = host_inputs(backward().tensors(s, DType::fp32), seed);
  const auto forward_out = run_oracle(registered_op("attention_fwd"), s, {in[0], in[1], in[2]});
  in[3].values = forward_out[0].values;  // o
  in[4].values = forward_out[1].values;  // lse
  return in;
}

// The op's oracle at positions `rows` of the sequence (all of them when empty).
std::vector<HostTensor> oracle_at(const Shape& s, const std::vector<HostTensor>& in, std::vector<std::int64_t> rows) {
  const std::int64_t seq = s.at("seq");
  if (rows.empty())
    for (std::int64_t i = 0; i < seq; ++i) rows.push_back(i);
  Shape sub = s;  // the sample axis holds the sampled positions' count
  for (auto& [name, value] : sub.axes)
    if (name == "seq") value = AxisValue(static_cast<std::int64_t>(rows.size()));
  auto out = empty_outputs(backward().tensors(sub, DType::fp32));
  backward().positional_oracle(sub, rows, in, out);
  return out;
}

void expect_definition(const Shape& s, std::uint64_t seed) {
  SCOPED_TRACE(s.to_assignments());
  const auto in = consistent_inputs(s, seed);
  const auto out = oracle_at(s, in, {});
  const AttentionGrads g = attention_backward(AttentionAxes::of(s), in[0].values.data(), in[1].values.data(),
                                              in[2].values.data(), in[5].values.data());
  const std::vector<double>* want[] = {&g.dq, &g.dk, &g.dv};
  for (std::size_t k = 0; k < 3; ++k) {
    ASSERT_EQ(out[k].values.size(), want[k]->size()) << out[k].name;
    for (std::size_t e = 0; e < want[k]->size(); ++e) {
      EXPECT_NEAR(out[k].values[e], (*want[k])[e], 1e-11 * (1 + std::abs((*want[k])[e]))) << out[k].name << "[" << e << "]";
      // A sums the terms' magnitudes (and more), R their root sum of squares: A >= |value| and A >= R.
      EXPECT_GE(out[k].abs_sum[e], std::abs(out[k].values[e]) * (1 - 1e-12)) << out[k].name << "[" << e << "]";
      EXPECT_GE(out[k].abs_sum[e], out[k].root_sum_sq[e] * (1 - 1e-12)) << out[k].name << "[" << e << "]";
    }
  }
}

TEST(AttentionBwdOracle, WithTheForwardsOAndLseItIsTheBackwardByDefinitionUnderEveryMask) {
  expect_definition(attention_shape(1, 9, 2, 2, 8, "0"), 1);       // no mask
  expect_definition(attention_shape(2, 7, 4, 2, 8, "1"), 2);       // causal, GQA (2 heads a kv head)
  expect_definition(attention_shape(1, 11, 4, 1, 8, "1", 3), 3);   // causal window of 3, multi-query
  expect_definition(attention_shape(1, 10, 2, 2, 8, "0", 2), 4);   // symmetric band of 3 keys
  expect_definition(attention_shape(1, 8, 2, 1, 8, "1", 0, "1.0"), 5);  // soft-cap against scores of order 1
  expect_definition(attention_shape(1, 1, 1, 1, 8, "1"), 6);       // one key: dq = dk = 0
}

TEST(AttentionBwdOracle, SampledPositionsGiveTheRowsOfTheWholeAnswer) {
  for (const Shape& s : {attention_shape(2, 13, 4, 2, 8, "1", 5), attention_shape(1, 12, 2, 1, 8, "0", 0, "2.0")}) {
    SCOPED_TRACE(s.to_assignments());
    const auto in = consistent_inputs(s, 11);
    const auto whole = oracle_at(s, in, {});
    const std::vector<std::int64_t> rows{0, 4, 5, s.at("seq") - 1};
    const auto sampled = oracle_at(s, in, rows);
    for (std::size_t k = 0; k < 3; ++k) {
      const auto& dims = whole[k].dims;  // [b, seq, heads, d]
      const std::int64_t heads = dims[2], d = dims[3], seq = dims[1], n = static_cast<std::int64_t>(rows.size());
      for (std::int64_t b = 0; b < dims[0]; ++b)
        for (std::int64_t r = 0; r < n; ++r)
          for (std::int64_t e = 0; e < heads * d; ++e) {
            const auto at = static_cast<std::size_t>((b * n + r) * heads * d + e);
            const auto from = static_cast<std::size_t>((b * seq + rows[static_cast<std::size_t>(r)]) * heads * d + e);
            // The same sums in the same order: equal to the bit.
            EXPECT_EQ(sampled[k].values[at], whole[k].values[from]) << whole[k].name << " row " << rows[r];
            EXPECT_EQ(sampled[k].abs_sum[at], whole[k].abs_sum[from]);
            EXPECT_EQ(sampled[k].root_sum_sq[at], whole[k].root_sum_sq[from]);
          }
    }
  }
}

// The case's O and lse are inputs: the oracle reads them as given (a variant reads the same), so a
// different lse changes every p_ij by the same factor.
TEST(AttentionBwdOracle, ItReadsLseAndOAsGiven) {
  const Shape s = attention_shape(1, 6, 2, 2, 8, "0");
  auto in = consistent_inputs(s, 21);
  const auto before = oracle_at(s, in, {});
  for (double& x : in[4].values) x -= std::log(2.0);  // every p_ij doubles
  const auto after = oracle_at(s, in, {});
  for (std::size_t e = 0; e < before[2].values.size(); ++e)
    EXPECT_NEAR(after[2].values[e], 2 * before[2].values[e], 1e-12 * (1 + std::abs(before[2].values[e]))) << "dv";
}

}  // namespace
}  // namespace attention_bwd_oracle_test
}  // namespace kwb
