// The SwiGLU oracles on the host: forward and backward against values worked out by hand, the
// backward against finite differences of the forward, the work model's bytes and FLOPs, and
// the default shapes' promises (the peer's shape, an odd hidden size, tensors under 2 GiB).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "harness/catalogue/registry.hpp"
#include "reference/swiglu.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace swiglu_oracle_test {
namespace {

Shape shape(std::int64_t rows, std::int64_t cols) { return Shape{{{"rows", rows}, {"cols", cols}}}; }

// sigmoid(1) and sigmoid(-2), the two non-trivial sigmoids the hand cases use.
constexpr double kSig1 = 0.7310585786300049;
constexpr double kSigMinus2 = 0.11920292202211755;

HostTensor tensor(const char* name, std::vector<double> values) {
  return {name, {1, static_cast<std::int64_t>(values.size())}, std::move(values)};
}

TEST(SwigluOracle, ForwardMatchesHandValues) {
  // silu(0) = 0; silu(1) = sigmoid(1); silu(-2) = -2 sigmoid(-2); each times up.
  const std::vector<HostTensor> in{tensor("gate", {0, 1, -2}), tensor("up", {3, 2, 0.5})};
  const auto out = run_oracle(registered_op("swiglu_fwd"), shape(1, 3), in);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_DOUBLE_EQ(out[0].values[0], 0.0);
  EXPECT_DOUBLE_EQ(out[0].values[1], 2 * kSig1);
  EXPECT_DOUBLE_EQ(out[0].values[2], 0.5 * -2 * kSigMinus2);
}

TEST(SwigluOracle, BackwardMatchesHandValues) {
  // d silu / dg = sig (1 + g (1 - sig)): 0.5 at 0; s1 (2 - s1) at 1; s2 (2 s2 - 1) at -2.
  const std::vector<HostTensor> in{tensor("gate", {0, 1, -2}), tensor("up", {3, 2, 0.5}),
                                   tensor("dout", {1, -1, 2})};
  const auto out = run_oracle(registered_op("swiglu_bwd"), shape(1, 3), in);
  ASSERT_EQ(out.size(), 2u);
  const auto& dgate = out[0].values;
  const auto& dup = out[1].values;
  EXPECT_DOUBLE_EQ(dgate[0], 1 * 3 * 0.5);
  EXPECT_DOUBLE_EQ(dgate[1], -1 * 2 * kSig1 * (2 - kSig1));
  EXPECT_NEAR(dgate[2], 2 * 0.5 * kSigMinus2 * (2 * kSigMinus2 - 1), 1e-15);
  EXPECT_DOUBLE_EQ(dup[0], 0.0);
  EXPECT_DOUBLE_EQ(dup[1], -1 * kSig1);
  EXPECT_DOUBLE_EQ(dup[2], 2 * -2 * kSigMinus2);
}

TEST(SwigluOracle, GateGradientChangesSignAtTheMinimumOfSilu) {
  // silu has its minimum at g ~ -1.2785 (where 1 + g (1 - sig) = 0): the gradient is negative
  // just below it and positive just above, for positive dout * up.
  EXPECT_LT(swiglu_backward(-1.30, 1, 1).dgate, 0);
  EXPECT_GT(swiglu_backward(-1.26, 1, 1).dgate, 0);
  EXPECT_NEAR(swiglu_backward(-1.2784645427610738, 1, 1).dgate, 0, 1e-12);
}

TEST(SwigluOracle, BackwardEqualsFiniteDifferencesOfForward) {
  const Shape s = shape(5, 7);
  const auto in = host_inputs(registered_op("swiglu_bwd").tensors(s, DType::fp32), 11);  // gate, up, dout
  const auto grads = run_oracle(registered_op("swiglu_bwd"), s, in);
  const Op& fwd = registered_op("swiglu_fwd");
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<std::int64_t> pick(0, 5 * 7 - 1);
  for (int trial = 0; trial < 8; ++trial) {
    const std::int64_t e = pick(rng);
    for (std::size_t input = 0; input < 2; ++input) {  // gate -> dgate, up -> dup
      const double fd = finite_difference_vjp(fwd, s, {in[0], in[1]}, input, e, {in[2]});
      const double analytic = grads[input].values[static_cast<std::size_t>(e)];
      EXPECT_NEAR(analytic, fd, 1e-6 * (1 + std::abs(fd))) << "input " << input << " element " << e;
      EXPECT_NE(analytic, 0.0) << "random inputs give non-zero gradients";
    }
  }
}

TEST(SwigluOracle, WorkCountsEachTensorOnceAndAFairFlopCount) {
  const Shape s = shape(16, 8);
  EXPECT_EQ(registered_op("swiglu_fwd").work(s, DType::bf16).bytes, 3 * 16 * 8 * 2);
  EXPECT_EQ(registered_op("swiglu_fwd").work(s, DType::fp32).bytes, 3 * 16 * 8 * 4);
  EXPECT_EQ(registered_op("swiglu_bwd").work(s, DType::fp16).bytes, 5 * 16 * 8 * 2);
  EXPECT_EQ(registered_op("swiglu_bwd").work(s, DType::fp32).bytes, 5 * 16 * 8 * 4);
  EXPECT_EQ(registered_op("swiglu_fwd").work(s, DType::bf16).flops, 5 * 16 * 8);
  EXPECT_EQ(registered_op("swiglu_bwd").work(s, DType::bf16).flops, 11 * 16 * 8);
}

TEST(SwigluOracle, DefaultShapesHoldThePeerShapeAnOddSizeAndStayUnder2GiB) {
  for (const char* name : {"swiglu_fwd", "swiglu_bwd"}) {
    const Op& op = registered_op(name);
    bool peer = false, odd = false;
    for (const Shape& s : op.default_shapes) {
      EXPECT_FALSE(op.invalid(s).has_value());
      peer = peer || (s.at("rows") == 16384 && s.at("cols") == 7168);
      odd = odd || s.at("cols") % 8 != 0;
      for (const auto& t : op.tensors(s, DType::fp32)) EXPECT_LT(bytes_of(t, DType::fp32), 2.0 * (1 << 30)) << t.name;
    }
    EXPECT_TRUE(peer) << name << ": torch.compile's 16384 x 7168 must be swept";
    EXPECT_TRUE(odd) << name << ": a hidden size that is not a multiple of 8";
    for (const Shape& s : op.edge_shapes) EXPECT_FALSE(op.invalid(s).has_value());
    EXPECT_TRUE(op.invalid(shape(0, 8)).has_value());
  }
}

}  // namespace
}  // namespace swiglu_oracle_test
}  // namespace kwb
