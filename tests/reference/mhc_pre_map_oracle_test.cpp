// The mHC-lite pre-map oracles on the host: forward and both gradients against values worked out
// by hand, the gradients against finite differences of the registered forward, the work models'
// bytes and FLOPs, the per-output tolerances, the inputs' distributions and the shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/mhc.hpp"
#include "reference/mhc_pre_map.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace mhc_pre_map_oracle_test {
namespace {

HostTensor tensor(const char* name, std::vector<std::int64_t> dims, std::vector<double> values) {
  return {name, std::move(dims), std::move(values)};
}

// Two tokens, C = 2. Token 0: streams (1, 2), (3, 4), (5, 6), (7, 8) with h_pre (1, 0.5, -1, 2);
// token 1: every stream (1, -1) with h_pre (1, 2, 3, 4), so a wrong token stride shows.
const std::vector<double> kH{1, 2, 3, 4, 5, 6, 7, 8, 1, -1, 1, -1, 1, -1, 1, -1};
const std::vector<double> kHpre{1, 0.5, -1, 2, 1, 2, 3, 4};
const std::vector<double> kdX{1, -2, 0.5, 3};

TEST(MhcPreMapOracle, ForwardMatchesHandValues) {
  // Token 0: c0 = 1 + 1.5 - 5 + 14 = 11.5, c1 = 2 + 2 - 6 + 16 = 14; token 1: (10, -10).
  const auto out = run_oracle(registered_op("mhc_pre_map_fwd"), mhc_shape(2, 2),
                              {tensor("H", {2, 4, 2}, kH), tensor("h_pre", {2, 4}, kHpre)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].values, (std::vector<double>{11.5, 14, 10, -10}));
}

TEST(MhcPreMapOracle, BackwardDxMatchesHandValues) {
  // dH[t, i, :] = h_pre[t, i] * dX[t, :].
  const auto out = run_oracle(registered_op("mhc_pre_map_bwd_dx"), mhc_shape(2, 2),
                              {tensor("h_pre", {2, 4}, kHpre), tensor("dX", {2, 2}, kdX)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].values, (std::vector<double>{1, -2, 0.5, -1, -1, 2, 2, -4,  //
                                                0.5, 3, 1, 6, 1.5, 9, 2, 12}));
}

TEST(MhcPreMapOracle, BackwardHpreMatchesHandValues) {
  // Token 0: (1, 2).(1, -2) = -3, (3, 4) -> -5, (5, 6) -> -7, (7, 8) -> -9; token 1: 0.5 - 3.
  const auto out = run_oracle(registered_op("mhc_pre_map_bwd_hpre"), mhc_shape(2, 2),
                              {tensor("H", {2, 4, 2}, kH), tensor("dX", {2, 2}, kdX)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].values, (std::vector<double>{-3, -5, -7, -9, -2.5, -2.5, -2.5, -2.5}));
}

TEST(MhcPreMapOracle, BothGradientsEqualFiniteDifferencesOfForward) {
  const Shape s = mhc_shape(3, 5);
  const Op& fwd = registered_op("mhc_pre_map_fwd");
  const auto fwd_in = host_inputs(fwd.tensors(s, DType::fp32), 11);                                   // H, h_pre
  const auto dX = host_inputs(registered_op("mhc_pre_map_bwd_dx").tensors(s, DType::fp32), 12)[1];  // dX
  const auto dH = run_oracle(registered_op("mhc_pre_map_bwd_dx"), s, {fwd_in[1], dX})[0];
  const auto dh_pre = run_oracle(registered_op("mhc_pre_map_bwd_hpre"), s, {fwd_in[0], dX})[0];
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 12; ++trial) {
    const std::int64_t e = std::uniform_int_distribution<std::int64_t>(0, 3 * 4 * 5 - 1)(rng);  // an H element
    const double fd = finite_difference_vjp(fwd, s, fwd_in, 0, e, {dX});
    EXPECT_NEAR(dH.values[e], fd, 1e-6 * (1 + std::abs(fd))) << "dH element " << e;
    EXPECT_NE(dH.values[e], 0.0) << "random inputs give non-zero gradients";
  }
  for (std::int64_t e = 0; e < 3 * 4; ++e) {  // every h_pre element
    const double fd = finite_difference_vjp(fwd, s, fwd_in, 1, e, {dX});
    EXPECT_NEAR(dh_pre.values[e], fd, 1e-6 * (1 + std::abs(fd))) << "dh_pre element " << e;
    EXPECT_NE(dh_pre.values[e], 0.0);
  }
}

TEST(MhcPreMapOracle, WorkCountsEachTensorOnceAndTwoFlopsPerMultiplyAdd) {
  // (n + 1) T C activations of the case dtype plus n T fp32 coefficients, for all three ops.
  const Shape s = mhc_shape(16, 8);
  for (const char* name : {"mhc_pre_map_fwd", "mhc_pre_map_bwd_dx", "mhc_pre_map_bwd_hpre"}) {
    const Op& op = registered_op(name);
    EXPECT_EQ(op.work(s, DType::bf16).bytes, 5 * 16 * 8 * 2 + 16 * 4 * 4) << name;
    EXPECT_EQ(op.work(s, DType::fp32).bytes, 5 * 16 * 8 * 4 + 16 * 4 * 4) << name;
  }
  EXPECT_EQ(registered_op("mhc_pre_map_fwd").work(s, DType::bf16).flops, 2 * 4 * 16 * 8);  // n fma per X
  EXPECT_EQ(registered_op("mhc_pre_map_bwd_dx").work(s, DType::bf16).flops, 4 * 16 * 8);   // 1 mul per dH
  EXPECT_EQ(registered_op("mhc_pre_map_bwd_hpre").work(s, DType::bf16).flops, 2 * 4 * 16 * 8);  // 1 fma per H
}

TEST(MhcPreMapOracle, TolerancesFollowEachOutputsReductionLength) {
  const auto x_bf16 = registered_op("mhc_pre_map_fwd").tensors(mhc_shape(4, 1024), DType::bf16)[2];
  // X: an error bound over its n = 4 terms (the oracle's abs_sum) and X's own rounding.
  EXPECT_DOUBLE_EQ(x_bf16.tolerance->abs_sum_scale, fp32_roundings_scale(4));
  EXPECT_DOUBLE_EQ(x_bf16.tolerance->rtol, rounding_rtol(ElemType::bf16));
  EXPECT_LT(x_bf16.tolerance->atol, 1e-30);
  const auto dH = registered_op("mhc_pre_map_bwd_dx").tensors(mhc_shape(4, 1024), DType::bf16)[2];
  ASSERT_TRUE(dH.tolerance.has_value()) << "one product, one rounding: relative";
  EXPECT_LT(dH.tolerance->rtol, 1.3 / 256);
  EXPECT_LT(dH.tolerance->atol, 1e-30);
  const Op& hpre = registered_op("mhc_pre_map_bwd_hpre");
  const auto narrow = hpre.tensors(mhc_shape(4, 1024), DType::bf16)[2];
  const auto wide = hpre.tensors(mhc_shape(4, 4096), DType::bf16)[2];
  EXPECT_EQ(narrow.elem, ElemType::fp32);
  EXPECT_EQ(narrow.tolerance->atol, reduction_tolerance(ElemType::fp32, 1024).atol);  // C terms
  EXPECT_GT(wide.tolerance->atol, narrow.tolerance->atol);
}

TEST(MhcPreMapOracle, CoefficientsAreFp32SigmoidRangeAndActivationsUnitNormal) {
  const auto fwd = registered_op("mhc_pre_map_fwd").tensors(mhc_shape(8, 16), DType::bf16);
  EXPECT_EQ(fwd[0].elem, ElemType::case_dtype);
  EXPECT_EQ(fwd[1].elem, ElemType::fp32);
  EXPECT_EQ(fwd[1].init.kind, Distribution::Kind::uniform);
  EXPECT_EQ(fwd[1].init.a, 0.0);
  EXPECT_EQ(fwd[1].init.b, 1.0);
  for (const auto& t : fwd) EXPECT_EQ(t.sample_dim, 0) << t.name;
  const auto h_pre = host_inputs(fwd, 5)[1];
  for (double v : h_pre.values) {
    EXPECT_GT(v, 0.0);
    EXPECT_LT(v, 1.0);
  }
}

TEST(MhcPreMapOracle, ShapesHoldTheTargetAndTheEdgesAndRejectEmpty) {
  for (const char* name : {"mhc_pre_map_fwd", "mhc_pre_map_bwd_dx", "mhc_pre_map_bwd_hpre"}) {
    const Op& op = registered_op(name);
    bool target = false;
    for (const Shape& s : op.default_shapes) {
      EXPECT_FALSE(op.invalid(s).has_value());
      target = target || (s.at("tokens") == 65536 && s.at("channels") == 1024);
    }
    EXPECT_TRUE(target) << name;
    for (const Shape& s : op.edge_shapes) EXPECT_FALSE(op.invalid(s).has_value());
    EXPECT_TRUE(op.invalid(mhc_shape(0, 8)).has_value());
    EXPECT_EQ(op.sample_axis, "tokens");
  }
}

}  // namespace
}  // namespace mhc_pre_map_oracle_test
}  // namespace kwb
