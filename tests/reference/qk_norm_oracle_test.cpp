// The qk_norm_fwd / qk_norm_bwd oracles on the host: hand-computed values, every gradient of
// the backward oracle against finite differences of the forward oracle (grouped KV heads and
// an odd head_dim), the work models' bytes, and the shapes the ops declare.
#include <gtest/gtest.h>

#include <cmath>

#include "harness/catalogue/registry.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace qk_norm_oracle_test {
namespace {

Shape qk_shape(std::int64_t tokens, std::int64_t heads, std::int64_t kv_heads, std::int64_t head_dim) {
  return Shape{{{"tokens", tokens}, {"heads", heads}, {"kv_heads", kv_heads}, {"head_dim", head_dim}}};
}

HostTensor tensor(const char* name, std::vector<std::int64_t> dims, std::vector<double> values) {
  return {name, std::move(dims), std::move(values)};
}

TEST(QkNormOracle, ForwardNormalisesEachHeadVectorToUnitLengthThenScalesByItsOwnWeight) {
  // One token, two Q heads sharing one K head, head_dim 2.
  const Shape s = qk_shape(1, 2, 1, 2);
  const std::vector<HostTensor> in = {
      tensor("q", {1, 2, 2}, {3, 4, -1, 0}), tensor("k", {1, 1, 2}, {0, 2}),
      tensor("q_weight", {2}, {1, 2}), tensor("k_weight", {2}, {0.5, 3})};
  const auto out = run_oracle(registered_op("qk_norm_fwd"), s, in);
  // |(3, 4)| = 5, |(-1, 0)| = 1, |(0, 2)| = 2 (eps = 1e-6 moves them by < 1e-7 relative).
  const std::vector<double> q_out = {0.6, 1.6, -1, 0};
  const std::vector<double> k_out = {0, 3};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(out[0].values[i], q_out[i], 1e-6) << i;
  for (std::size_t i = 0; i < 2; ++i) EXPECT_NEAR(out[1].values[i], k_out[i], 1e-6) << i;
}

TEST(QkNormOracle, ForwardEpsKeepsAZeroHeadVectorFinite) {
  const Shape s = qk_shape(1, 1, 1, 3);
  const std::vector<HostTensor> in = {tensor("q", {1, 1, 3}, {0, 0, 0}), tensor("k", {1, 1, 3}, {1e-3, 0, 0}),
                                      tensor("q_weight", {3}, {1, 1, 1}), tensor("k_weight", {3}, {1, 1, 1})};
  const auto out = run_oracle(registered_op("qk_norm_fwd"), s, in);
  for (double v : out[0].values) EXPECT_EQ(v, 0.0);
  // 1e-3 / sqrt(1e-6 + 1e-6) = 1 / sqrt(2).
  EXPECT_NEAR(out[1].values[0], 1 / std::sqrt(2.0), 1e-12);
}

TEST(QkNormOracle, BackwardMatchesHandComputedGradients) {
  // x = (3, 4), w = (1, 2), dy = (1, 1): xhat = (0.6, 0.8), g = (1, 2), g.xhat = 2.2,
  // dx = (1/5) * (g - 2.2 xhat) = (-0.064, 0.048), dw = dy * xhat = (0.6, 0.8).
  // K: x = (0, -2), w = (1, 1), dy = (1, 2): xhat = (0, -1), g = (1, 2), g.xhat = -2,
  // dx = (1/2) * ((1, 2) - (0, 2)) = (0.5, 0), dw = (0, -2).
  const Shape s = qk_shape(1, 1, 1, 2);
  const std::vector<HostTensor> in = {
      tensor("q", {1, 1, 2}, {3, 4}),       tensor("k", {1, 1, 2}, {0, -2}),
      tensor("q_weight", {2}, {1, 2}),      tensor("k_weight", {2}, {1, 1}),
      tensor("dq_out", {1, 1, 2}, {1, 1}),  tensor("dk_out", {1, 1, 2}, {1, 2})};
  const auto g = run_oracle(registered_op("qk_norm_bwd"), s, in);
  EXPECT_NEAR(g[0].values[0], -0.064, 1e-6);
  EXPECT_NEAR(g[0].values[1], 0.048, 1e-6);
  EXPECT_NEAR(g[1].values[0], 0.5, 1e-6);
  EXPECT_NEAR(g[1].values[1], 0.0, 1e-6);
  EXPECT_NEAR(g[2].values[0], 0.6, 1e-6);
  EXPECT_NEAR(g[2].values[1], 0.8, 1e-6);
  EXPECT_NEAR(g[3].values[0], 0.0, 1e-6);
  EXPECT_NEAR(g[3].values[1], -2.0, 1e-6);
}

TEST(QkNormOracle, EveryBackwardGradientMatchesFiniteDifferencesOfTheForward) {
  const Op& fwd = registered_op("qk_norm_fwd");
  const Op& bwd = registered_op("qk_norm_bwd");
  for (const Shape& s : {qk_shape(3, 4, 2, 7), qk_shape(2, 3, 3, 16), qk_shape(5, 2, 1, 1)}) {
    const auto in = host_inputs(bwd.tensors(s, DType::fp32), 11);  // q, k, q_weight, k_weight, dq_out, dk_out
    const auto grads = run_oracle(bwd, s, in);                     // dq, dk, dq_weight, dk_weight
    const std::vector<HostTensor> fwd_in = {in[0], in[1], in[2], in[3]};
    const std::vector<HostTensor> cotangents = {in[4], in[5]};
    std::mt19937_64 rng(3);
    for (std::size_t input = 0; input < 4; ++input) {
      const auto n = static_cast<std::int64_t>(fwd_in[input].values.size());
      for (int trial = 0; trial < 6; ++trial) {
        const std::int64_t e = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n));
        const double fd = finite_difference_vjp(fwd, s, fwd_in, input, e, cotangents);
        const double analytic = grads[input].values[static_cast<std::size_t>(e)];
        EXPECT_NEAR(analytic, fd, 1e-6 * (1 + std::abs(fd)))
            << "gradient of input " << input << " element " << e << " at " << s.to_assignments();
      }
    }
  }
}

TEST(QkNormOracle, GroupedKvHeadsAreNormalisedIndependentlyOfTheQueryHeads) {
  // K with 2 heads against Q with 8: k_out depends on k and k_weight only.
  const Op& fwd = registered_op("qk_norm_fwd");
  const Shape s = qk_shape(4, 8, 2, 5);
  auto in = host_inputs(fwd.tensors(s, DType::fp32), 21);
  const auto before = run_oracle(fwd, s, in);
  for (double& v : in[0].values) v *= -3;  // change every q
  const auto after = run_oracle(fwd, s, in);
  EXPECT_EQ(before[1].values, after[1].values);
  // Scaling a head vector leaves its normalised direction: q_out flips sign (up to eps's share).
  for (std::size_t i = 0; i < before[0].values.size(); ++i)
    EXPECT_NEAR(after[0].values[i], -before[0].values[i], 1e-4 * std::abs(before[0].values[i]));
  // Each K head vector of the output has norm |k_weight-scaled unit vector|: check via unit weight.
  for (double& w : in[3].values) w = 1;
  const auto unit = run_oracle(fwd, s, in);
  for (std::int64_t v = 0; v < 4 * 2; ++v) {
    double norm_sq = 0;
    for (std::int64_t e = 0; e < 5; ++e) norm_sq += std::pow(unit[1].values[static_cast<std::size_t>(v * 5 + e)], 2);
    EXPECT_NEAR(norm_sq, 1.0, 1e-6) << "k head vector " << v;
  }
}

TEST(QkNormOracle, WorkModelsCountEachTensorOnceAtItsOwnElementSize) {
  const Shape s = qk_shape(5, 4, 2, 3);  // q 60, k 30 elements, weights 3
  EXPECT_EQ(registered_op("qk_norm_fwd").work(s, DType::bf16).bytes, (2 * 60 + 2 * 30 + 2 * 3) * 2);
  EXPECT_EQ(registered_op("qk_norm_fwd").work(s, DType::fp32).bytes, (2 * 60 + 2 * 30 + 2 * 3) * 4);
  // q, k, dq_out, dk_out, dq, dk in bf16; weights bf16; weight gradients fp32.
  EXPECT_EQ(registered_op("qk_norm_bwd").work(s, DType::bf16).bytes, (3 * 60 + 3 * 30 + 2 * 3) * 2 + 2 * 3 * 4);
  EXPECT_EQ(registered_op("qk_norm_fwd").work(s, DType::bf16).flops, 4 * 90);
}

TEST(QkNormOracle, InvalidRejectsKvHeadsThatDoNotDivideHeads) {
  for (const char* name : {"qk_norm_fwd", "qk_norm_bwd"}) {
    const Op& op = registered_op(name);
    EXPECT_TRUE(op.invalid(qk_shape(4, 6, 4, 64)).has_value()) << name;
    EXPECT_TRUE(op.invalid(qk_shape(4, 6, 0, 64)).has_value()) << name;
    EXPECT_TRUE(op.invalid(qk_shape(4, 6, 2, 0)).has_value()) << name;
    EXPECT_FALSE(op.invalid(qk_shape(4, 32, 8, 64)).has_value()) << name;
    EXPECT_FALSE(op.invalid(qk_shape(4, 16, 16, 64)).has_value()) << name;
  }
}

TEST(QkNormOracle, DeclaredShapesAreValidAndBackwardDefaultsStayVerifiableInFull) {
  for (const char* name : {"qk_norm_fwd", "qk_norm_bwd"}) {
    const Op& op = registered_op(name);
    EXPECT_GE(op.default_shapes.size(), 6u) << name;
    for (const auto& shapes : {op.default_shapes, op.edge_shapes})
      for (const Shape& s : shapes) EXPECT_FALSE(op.invalid(s).has_value()) << name << " " << s.to_assignments();
  }
  const Op& bwd = registered_op("qk_norm_bwd");
  for (const Shape& s : bwd.default_shapes)
    for (const auto& t : bwd.tensors(s, DType::bf16)) EXPECT_LE(t.numel(), 128LL << 20) << s.to_assignments();
  // The forward's target shape (tokens 16384, 32 heads, 8 KV heads, head_dim 128) is swept.
  bool has_target = false;
  for (const Shape& s : registered_op("qk_norm_fwd").default_shapes) has_target |= s == qk_shape(16384, 32, 8, 128);
  EXPECT_TRUE(has_target);
}

TEST(QkNormOracle, WeightGradientToleranceGrowsWithTheTokensItSums) {
  const Op& bwd = registered_op("qk_norm_bwd");
  const auto small = bwd.tensors(qk_shape(16, 32, 8, 128), DType::bf16);
  const auto large = bwd.tensors(qk_shape(16384, 32, 8, 128), DType::bf16);
  EXPECT_EQ(small[8].name, "dq_weight");
  EXPECT_LT(small[8].tolerance->atol, large[8].tolerance->atol);
  EXPECT_LT(small[9].tolerance->rtol, large[9].tolerance->rtol);
}

}  // namespace
}  // namespace qk_norm_oracle_test
}  // namespace kwb
