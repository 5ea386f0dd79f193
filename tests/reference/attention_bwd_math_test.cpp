// attention's backward by its definition (reference/attention_bwd.hpp), the coming attention_bwd
// op's oracle, against central differences of attention_fwd's registered oracle: every element of
// dq, dk and dv, under every mask (none, causal, a causal window, a symmetric window), the logit
// soft-cap and grouped-query heads (dk and dv summed over a group's query heads); and
// FlashAttention's preprocessing identity D_i = do_i . o_i.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "reference/attention.hpp"
#include "reference/attention_bwd.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace attention_bwd_math_test {
namespace {

const Op& forward() { return registered_op("attention_fwd"); }

// dO drawn N(0, 1), in o's layout.
HostTensor cotangent(const Shape& s, std::uint64_t seed) {
  const auto specs = forward().tensors(s, DType::fp32);
  HostTensor o{"do", specs[3].dims,
               std::vector<double>(static_cast<std::size_t>(specs[3].numel()))};
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  for (double& x : o.values) x = normal(rng);
  return o;
}

void expect_gradients_match_finite_differences(const Shape& s, std::uint64_t seed) {
  SCOPED_TRACE(s.to_assignments());
  const auto in = host_inputs(forward().tensors(s, DType::fp32), seed);  // q, k, v
  const HostTensor dout = cotangent(s, seed + 1);
  const AttentionGrads g =
      attention_backward(AttentionAxes::of(s), in[0].values.data(), in[1].values.data(),
                         in[2].values.data(), dout.values.data());
  const std::vector<double>* grads[] = {&g.dq, &g.dk, &g.dv};
  const char* names[] = {"dq", "dk", "dv"};
  for (std::size_t input = 0; input < 3; ++input) {
    ASSERT_EQ(grads[input]->size(), in[input].values.size()) << names[input];
    for (std::size_t e = 0; e < in[input].values.size(); ++e) {
      // L = sum(dO * O): lse's cotangent is 0 (the op's output the backward does not take).
      const double fd =
          finite_difference_vjp(forward(), s, in, input, static_cast<std::int64_t>(e), {dout});
      EXPECT_NEAR((*grads[input])[e], fd, 1e-6 * (1 + std::abs(fd)))
          << names[input] << "[" << e << "]";
    }
  }
}

TEST(AttentionBackwardMath, GradientsEqualFiniteDifferencesOfTheForwardOracleUnderEveryMask) {
  expect_gradients_match_finite_differences(attention_shape(1, 5, 2, 2, 4, "0"), 1);  // no mask
  expect_gradients_match_finite_differences(attention_shape(2, 6, 2, 1, 3, "1"),
                                            2);  // causal, 2 heads share a kv head
  expect_gradients_match_finite_differences(attention_shape(1, 7, 4, 2, 4, "1", 3),
                                            3);  // causal window of 3 keys
  expect_gradients_match_finite_differences(attention_shape(1, 7, 2, 2, 4, "0", 2),
                                            4);  // symmetric band of 3 keys
  expect_gradients_match_finite_differences(attention_shape(1, 1, 1, 1, 8, "1"),
                                            5);  // one key: dq = dk = 0
}

TEST(AttentionBackwardMath, GradientsEqualFiniteDifferencesWithTheLogitSoftCap) {
  // Caps of 1 and 0.5 against scores of order 1: tanh's derivative is far from 1.
  expect_gradients_match_finite_differences(attention_shape(1, 6, 2, 1, 4, "1", 0, "1.0"), 6);
  expect_gradients_match_finite_differences(attention_shape(1, 5, 2, 2, 4, "0", 0, "0.5"), 7);
}

// FlashAttention's preprocessing: D_i = sum_j p_ij dp_ij equals do_i . o_i, o from the forward
// oracle.
TEST(AttentionBackwardMath, RowTermDEqualsTheDotOfDoAndTheForwardsOutput) {
  const Shape s = attention_shape(1, 9, 2, 1, 8, "1", 4, "0");
  const AttentionAxes a = AttentionAxes::of(s);
  const auto in = host_inputs(forward().tensors(s, DType::fp32), 8);
  const HostTensor dout = cotangent(s, 9);
  const auto out = run_oracle(forward(), s, in);  // o, lse
  AttentionBackwardScratch scratch(a.seq);
  std::vector<double> dq(8), dk(in[1].values.size()), dv(in[1].values.size());
  for (std::int64_t h = 0; h < a.heads; ++h)
    for (std::int64_t i = 0; i < a.seq; ++i) {
      const std::int64_t row = (i * a.heads + h) * a.head_dim;
      const double big_d = attention_backward_row(
          in[0].values.data() + row, in[1].values.data(), in[2].values.data(),
          dout.values.data() + row, dq.data(), dk.data(), dv.data(), scratch, i, a.seq, a.head_dim,
          a.kv_heads * a.head_dim, a.mask(), a.softcap);
      double dot = 0;
      for (std::int64_t e = 0; e < a.head_dim; ++e)
        dot += dout.values[row + e] * out[0].values[row + e];
      EXPECT_NEAR(big_d, dot, 1e-12 * (1 + std::abs(dot))) << "head " << h << " query " << i;
    }
}

}  // namespace
}  // namespace attention_bwd_math_test
}  // namespace kwb
