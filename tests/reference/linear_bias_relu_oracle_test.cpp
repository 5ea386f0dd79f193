// The linear_bias_relu oracle on the host: hand-computed values (bias, ReLU clipping), a direct
// triple loop on random inputs, sampled rows equal to the same rows of the full product (what
// the verifier relies on), the work model, tolerances that grow with k, and the registrations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "harness/catalogue/registry.hpp"
#include "reference/linear_bias_relu.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace {

HostTensor tensor(const char* name, std::vector<std::int64_t> dims, std::vector<double> values) {
  return {name, std::move(dims), std::move(values)};
}

TEST(LinearBiasReluOracle, MatchesHandValuesWithBiasAndClipping) {
  // x W^T = [[1, 2, 3], [3, -1, 2]]; + b = [[1.5, 0.5, 0.5], [3.5, -2.5, -0.5]]; ReLU clips row 1.
  const std::vector<HostTensor> in{tensor("x", {2, 2}, {1, 2, 3, -1}), tensor("W", {3, 2}, {1, 0, 0, 1, 1, 1}),
                                   tensor("b", {3}, {0.5, -1.5, -2.5})};
  const auto out = run_oracle(registered_op("linear_bias_relu"), linear_shape(2, 3, 2), in);
  ASSERT_EQ(out.size(), 1u);
  const double expected[6] = {1.5, 0.5, 0.5, 3.5, 0, 0};
  for (int i = 0; i < 6; ++i) EXPECT_DOUBLE_EQ(out[0].values[i], expected[i]) << "element " << i;
}

TEST(LinearBiasReluOracle, EqualsTripleLoopOnRandomInputs) {
  const Shape s = linear_shape(5, 7, 9);
  const Op& op = registered_op("linear_bias_relu");
  const auto in = host_inputs(op.tensors(s, DType::fp32), 3);  // x, W, b
  const auto out = run_oracle(op, s, in);
  int clipped = 0;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 7; ++j) {
      double acc = in[2].values[j];
      for (int p = 0; p < 9; ++p) acc += in[0].values[i * 9 + p] * in[1].values[j * 9 + p];
      EXPECT_NEAR(out[0].values[i * 7 + j], std::max(0.0, acc), 1e-12) << "row " << i << " col " << j;
      clipped += acc < 0;
    }
  EXPECT_GT(clipped, 0);  // the inputs exercise the ReLU
  EXPECT_LT(clipped, 35);
}

TEST(LinearBiasReluOracle, SampledRowsEqualTheSameRowsOfTheFullOutput) {
  const Shape full = linear_shape(6, 4, 3);
  const Op& op = registered_op("linear_bias_relu");
  const auto in = host_inputs(op.tensors(full, DType::fp32), 11);
  const auto all = run_oracle(op, full, in);
  // Rows 1 and 4 of x, as the verifier gathers them; W and b whole.
  std::vector<double> rows(in[0].values.begin() + 3, in[0].values.begin() + 6);
  rows.insert(rows.end(), in[0].values.begin() + 12, in[0].values.begin() + 15);
  const auto sampled = run_oracle(op, linear_shape(2, 4, 3), {tensor("x", {2, 3}, rows), in[1], in[2]});
  for (int j = 0; j < 4; ++j) {
    EXPECT_DOUBLE_EQ(sampled[0].values[j], all[0].values[1 * 4 + j]);
    EXPECT_DOUBLE_EQ(sampled[0].values[4 + j], all[0].values[4 * 4 + j]);
  }
}

TEST(LinearBiasReluOracle, WorkCountsTwoMnkFlopsAndEachTensorOnce) {
  const Op& op = registered_op("linear_bias_relu");
  const Shape s = linear_shape(16, 8, 4);
  EXPECT_EQ(op.work(s, DType::fp32).flops, 2.0 * 16 * 8 * 4);
  EXPECT_EQ(op.work(s, DType::bf16).bytes, 2.0 * (16 * 4 + 8 * 4 + 8 + 16 * 8));
  EXPECT_EQ(op.work(s, DType::fp32).bytes, 4.0 * (16 * 4 + 8 * 4 + 8 + 16 * 8));
}

TEST(LinearBiasReluOracle, OutputIsCheckedAgainstAnErrorBoundAndSampledAlongM) {
  const Op& op = registered_op("linear_bias_relu");
  for (DType dtype : {DType::fp32, DType::fp16, DType::bf16}) {
    const auto narrow = op.tensors(linear_shape(4, 4, 64), dtype);
    const auto wide = op.tensors(linear_shape(4, 4, 16384), dtype);
    ASSERT_TRUE(narrow[3].tolerance && wide[3].tolerance);
    EXPECT_TRUE(wide[3].tolerance->is_error_bound()) << to_string(dtype);
    // The fp32 accumulation's share grows with k (sqrt(k) u A).
    EXPECT_GT(wide[3].tolerance->abs_sum_scale, narrow[3].tolerance->abs_sum_scale) << to_string(dtype);
  }
  // tf32 operands (u = 2^-11) in fp32: 6.5 u R on top of the fp32 roundings.
  const auto fp32 = op.tensors(linear_shape(4, 4, 4096), DType::fp32);
  EXPECT_GT(fp32[3].tolerance->root_sum_sq_scale, 6 * 0.00048828125);
  EXPECT_LT(fp32[3].tolerance->root_sum_sq_scale, 7 * 0.00048828125);
  // Sample axis m: x and y follow it, W and b do not.
  EXPECT_EQ(fp32[0].sample_dim, 0);
  EXPECT_EQ(fp32[1].sample_dim, -1);
  EXPECT_EQ(fp32[2].sample_dim, -1);
  EXPECT_EQ(fp32[3].sample_dim, 0);
}

TEST(LinearBiasReluOracle, MagnitudesAreThoseOfTheProductsAndTheBias) {
  // y[0, 0] = relu(1*1 + 2*0 + 0.5) with terms 1, 0, 0.5; y[1, 1] = relu(3*0 - 1*1 - 1.5) = 0, terms 0, -1, -1.5.
  const std::vector<HostTensor> in{tensor("x", {2, 2}, {1, 2, 3, -1}), tensor("W", {3, 2}, {1, 0, 0, 1, 1, 1}),
                                   tensor("b", {3}, {0.5, -1.5, -2.5})};
  const auto out = run_oracle(registered_op("linear_bias_relu"), linear_shape(2, 3, 2), in);
  ASSERT_EQ(out[0].abs_sum.size(), 6u);
  ASSERT_EQ(out[0].root_sum_sq.size(), 6u);
  EXPECT_DOUBLE_EQ(out[0].abs_sum[0], 1.5);
  EXPECT_DOUBLE_EQ(out[0].root_sum_sq[0], std::sqrt(1.25));
  EXPECT_DOUBLE_EQ(out[0].abs_sum[4], 2.5);
  EXPECT_DOUBLE_EQ(out[0].root_sum_sq[4], std::sqrt(1 + 2.25));
}

TEST(LinearBiasReluOracle, ShapesAndVariantsAreRegistered) {
  const Op& op = registered_op("linear_bias_relu");
  EXPECT_EQ(op.compute_unit, "tensor");
  for (const Shape& s : op.default_shapes) EXPECT_FALSE(op.invalid(s).has_value());
  for (const Shape& s : op.edge_shapes) EXPECT_FALSE(op.invalid(s).has_value());
  EXPECT_TRUE(op.invalid(linear_shape(0, 8, 8)).has_value());
  int baselines = 0, vendors = 0, fused = 0;
  for (const Variant* v : Registry::instance().variants("linear_bias_relu", false)) {
    baselines += v->role == Role::baseline;
    vendors += v->role == Role::vendor;
    fused += v->role == Role::fused;
    // A variant that runs fp32 on the tensor cores says tf32; the others refuse what it runs.
    const bool tf32 = v->name.find("tf32") != std::string::npos;
    if (v->refuse && (tf32 || v->name.find("mma") != std::string::npos || v->role == Role::vendor)) {
      EXPECT_EQ(v->refuse(linear_shape(8, 8, 8), DType::fp32).has_value(), !tf32) << v->name;
      EXPECT_EQ(v->refuse(linear_shape(8, 8, 8), DType::bf16).has_value(), tf32) << v->name;
    }
  }
  EXPECT_EQ(baselines, 1);
  EXPECT_EQ(vendors, 2);
  EXPECT_EQ(fused, 5);  // v1, v2, v3, v3 tf32, v4
}

// The Hopper kernel's TMA copies need 16-byte rows of x, W and y: it refuses k or n that are not
// multiples of 8 (v3 runs them), and fp32 (its tf32 path would truncate the operands).
TEST(LinearBiasReluOracle, HopperKernelRefusesWhatItsCopiesCannotDo) {
  const Variant* v4 = Registry::instance().find_variant("linear_bias_relu", "fused_v4_wgmma_tma_warp_specialized");
  ASSERT_NE(v4, nullptr);
  EXPECT_FALSE(v4->refuse(linear_shape(257, 136, 264), DType::bf16).has_value());
  EXPECT_FALSE(v4->refuse(linear_shape(1, 8, 8), DType::fp16).has_value());
  EXPECT_TRUE(v4->refuse(linear_shape(64, 64, 65), DType::bf16).has_value());
  EXPECT_TRUE(v4->refuse(linear_shape(64, 63, 64), DType::bf16).has_value());
  EXPECT_TRUE(v4->refuse(linear_shape(64, 64, 64), DType::fp32).has_value());
}

TEST(LinearBiasReluOracle, AxesReadMNKOnce) {
  const auto [m, n, k] = LinearAxes::of(linear_shape(257, 129, 264));
  EXPECT_EQ(m, 257);
  EXPECT_EQ(n, 129);
  EXPECT_EQ(k, 264);
}

}  // namespace
}  // namespace kwb
