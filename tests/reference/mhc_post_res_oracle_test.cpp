// The mHC-lite post-res oracles on the host: forward and backward against values worked out by
// hand, a property of doubly stochastic mixing, every backward output against finite differences
// of the registered forward, the inputs' distributions, the work model and the tolerances.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "harness/catalogue/registry.hpp"
#include "reference/mhc.hpp"
#include "reference/mhc_post_res.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace mhc_post_res_oracle_test {
namespace {

constexpr std::int64_t n = kMhcStreams;

HostTensor tensor(const char* name, std::vector<std::int64_t> dims, std::vector<double> values) {
  return {name, std::move(dims), std::move(values)};
}

// One token, C = 2: R = (I + P) / 2 with P the cyclic shift (P[i][(i + 1) % 4] = 1), doubly
// stochastic; H[j] = (j + 1, 10 (j + 1)); F = (2, -1); h_post = (0.5, 1, 1.5, 2).
std::vector<HostTensor> hand_inputs() {
  std::vector<double> R(16, 0.0);
  for (int i = 0; i < 4; ++i) R[i * 4 + i] = 0.5, R[i * 4 + (i + 1) % 4] = 0.5;
  return {tensor("H", {1, n, 2}, {1, 10, 2, 20, 3, 30, 4, 40}), tensor("F", {1, 2}, {2, -1}),
          tensor("R", {1, n, n}, R), tensor("h_post", {1, n}, {0.5, 1, 1.5, 2})};
}

TEST(MhcPostResOracle, ForwardMatchesHandValues) {
  // (R H)[i, 0] = ((i + 1) + ((i + 1) % 4 + 1)) / 2 = 1.5, 2.5, 3.5, 2.5; column 1 is 10x that.
  const auto out = run_oracle(registered_op("mhc_post_res_fwd"), mhc_shape(1, 2), hand_inputs());
  ASSERT_EQ(out.size(), 1u);
  const std::vector<double> expected{1.5 + 0.5 * 2, 15 - 0.5, 2.5 + 1 * 2, 25 - 1,
                                     3.5 + 1.5 * 2, 35 - 1.5, 2.5 + 2 * 2, 25 - 2};
  for (std::size_t e = 0; e < expected.size(); ++e) EXPECT_DOUBLE_EQ(out[0].values[e], expected[e]) << e;
}

TEST(MhcPostResOracle, BackwardMatchesHandValues) {
  // dHout[:, 0] = e_1 (one-hot stream 1), dHout[:, 1] = 1 for every stream.
  auto in = hand_inputs();
  in.push_back(tensor("dHout", {1, n, 2}, {0, 1, 1, 1, 0, 1, 0, 1}));
  const auto out = run_oracle(registered_op("mhc_post_res_bwd"), mhc_shape(1, 2), in);
  ASSERT_EQ(out.size(), 4u);
  // dH[:, 0] = row 1 of R = (0, .5, .5, 0); dH[:, 1] = column sums of R = 1.
  const std::vector<double> dH{0, 1, 0.5, 1, 0.5, 1, 0, 1};
  for (std::size_t e = 0; e < dH.size(); ++e) EXPECT_DOUBLE_EQ(out[0].values[e], dH[e]) << "dH " << e;
  // dF[0] = h_post[1]; dF[1] = sum h_post.
  EXPECT_DOUBLE_EQ(out[1].values[0], 1.0);
  EXPECT_DOUBLE_EQ(out[1].values[1], 5.0);
  // dR[i, j] = sum_c dHout[i, c] H[j, c]: 11 (j + 1) for i = 1, else 10 (j + 1).
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      EXPECT_DOUBLE_EQ(out[2].values[i * 4 + j], (i == 1 ? 11.0 : 10.0) * (j + 1)) << "dR " << i << "," << j;
  // dh_post[i] = sum_c dHout[i, c] F[c]: 2 - 1 for i = 1, else -1.
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(out[3].values[i], i == 1 ? 1.0 : -1.0) << "dh_post " << i;
}

TEST(MhcPostResOracle, DoublyStochasticMixKeepsAnEqualStateAndIsDrawnSo) {
  // Every stream equal to x and F = 0: rows of R sum to 1, so every output stream is x.
  const Shape s = mhc_shape(3, 5);
  auto in = host_inputs(registered_op("mhc_post_res_fwd").tensors(s, DType::fp32), 5);
  for (std::int64_t t = 0; t < 3; ++t) {
    for (std::int64_t i = 0; i < n; ++i) {
      double row = 0, col = 0;
      for (std::int64_t j = 0; j < n; ++j) row += in[2].values[(t * n + i) * n + j], col += in[2].values[(t * n + j) * n + i];
      EXPECT_NEAR(row, 1.0, 1e-12);
      EXPECT_NEAR(col, 1.0, 1e-12);
    }
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t c = 0; c < 5; ++c) in[0].values[(t * n + j) * 5 + c] = in[0].values[t * n * 5 + c];
  }
  for (double& f : in[1].values) f = 0;
  for (double h : in[3].values) EXPECT_TRUE(h >= 0.2 && h < 1.8) << h;
  const auto out = run_oracle(registered_op("mhc_post_res_fwd"), s, in);
  for (std::int64_t t = 0; t < 3; ++t)
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t c = 0; c < 5; ++c)
        EXPECT_NEAR(out[0].values[(t * n + i) * 5 + c], in[0].values[t * n * 5 + c], 1e-12);
}

TEST(MhcPostResOracle, EveryBackwardOutputEqualsFiniteDifferencesOfForward) {
  const Shape s = mhc_shape(3, 5);
  const auto in = host_inputs(registered_op("mhc_post_res_bwd").tensors(s, DType::fp32), 13);  // H F R h_post dHout
  const auto grads = run_oracle(registered_op("mhc_post_res_bwd"), s, in);                     // dH dF dR dh_post
  const Op& fwd = registered_op("mhc_post_res_fwd");
  const std::vector<HostTensor> fwd_in{in[0], in[1], in[2], in[3]};
  std::mt19937_64 rng(3);
  for (std::size_t input = 0; input < 4; ++input) {  // H -> dH, F -> dF, R -> dR, h_post -> dh_post
    std::uniform_int_distribution<std::int64_t> pick(0, static_cast<std::int64_t>(in[input].values.size()) - 1);
    for (int trial = 0; trial < 8; ++trial) {
      const std::int64_t e = pick(rng);
      const double fd = finite_difference_vjp(fwd, s, fwd_in, input, e, {in[4]});
      const double analytic = grads[input].values[static_cast<std::size_t>(e)];
      EXPECT_NEAR(analytic, fd, 1e-6 * (1 + std::abs(fd))) << "input " << input << " element " << e;
      EXPECT_NE(analytic, 0.0) << "random inputs give non-zero gradients";
    }
  }
}

TEST(MhcPostResOracle, WorkCountsEachTensorOnceAndTwoFlopsPerMultiplyAdd) {
  const std::int64_t T = 16, C = 8;
  const Shape s = mhc_shape(T, C);
  const double coef_in = (T * n * n + T * n) * 4.0;  // R, h_post (fp32)
  for (DType d : {DType::bf16, DType::fp32}) {
    const double b = d == DType::bf16 ? 2 : 4;
    EXPECT_EQ(registered_op("mhc_post_res_fwd").work(s, d).bytes, (2 * n * T * C + T * C) * b + coef_in);
    EXPECT_EQ(registered_op("mhc_post_res_bwd").work(s, d).bytes, (3 * n * T * C + 2 * T * C) * b + 2 * coef_in);
  }
  EXPECT_EQ(registered_op("mhc_post_res_fwd").work(s, DType::bf16).flops, 40.0 * T * C);
  EXPECT_EQ(registered_op("mhc_post_res_bwd").work(s, DType::bf16).flops, 80.0 * T * C);
}

TEST(MhcPostResOracle, PerTokenDotsGetToleranceGrowingWithChannels) {
  const Op& bwd = registered_op("mhc_post_res_bwd");
  const auto narrow = bwd.tensors(mhc_shape(4, 1024), DType::bf16);
  const auto wide = bwd.tensors(mhc_shape(4, 4096), DType::bf16);
  ASSERT_EQ(narrow[7].name, "dR");
  ASSERT_EQ(narrow[8].name, "dh_post");
  for (std::size_t k : {7u, 8u}) {
    EXPECT_EQ(narrow[k].elem, ElemType::fp32);
    EXPECT_GT(wide[k].tolerance->atol, narrow[k].tolerance->atol);
    EXPECT_LT(narrow[k].tolerance->rtol, 1e-4) << "an fp32 dot, not a bf16 one";
  }
  // dH and dF: bf16 outputs of 4-term mixes, no looser than a few bf16 steps.
  EXPECT_LT(narrow[5].tolerance->rtol, 2e-2);
  EXPECT_LT(narrow[6].tolerance->rtol, 2e-2);
}

TEST(MhcPostResOracle, ShapesAreValidAndEveryTensorIsSampledByToken) {
  for (const char* name : {"mhc_post_res_fwd", "mhc_post_res_bwd"}) {
    const Op& op = registered_op(name);
    for (const Shape& s : op.default_shapes) EXPECT_FALSE(op.invalid(s).has_value());
    for (const Shape& s : op.edge_shapes) EXPECT_FALSE(op.invalid(s).has_value());
    EXPECT_TRUE(op.invalid(mhc_shape(0, 8)).has_value());
    EXPECT_EQ(op.sample_axis, "tokens");
    for (const auto& t : op.tensors(mhc_shape(3, 5), DType::bf16)) EXPECT_EQ(t.sample_dim, 0) << name << " " << t.name;
  }
}

TEST(MhcPostResOracle, AxesReadTokensAndChannelsOnceAndTheFlatLength) {
  const auto axes = MhcAxes::of(mhc_shape(16383, 1000));
  EXPECT_EQ(axes.tokens, 16383);
  EXPECT_EQ(axes.channels, 1000);
  EXPECT_EQ(axes.flat_len(), kMhcStreams * 1000) << "K = n * C, one token's streams";
}

}  // namespace
}  // namespace mhc_post_res_oracle_test
}  // namespace kwb
