// The swiglu_mlp_fwd oracle on the host: a hand-computed one-element MLP, the oracle against a
// direct composition (three triple-loop GEMMs and the SwiGLU formula), the work model, the
// tolerances of the two reduction stages, and the registrations.
#include <gtest/gtest.h>

#include <cmath>

#include "harness/catalogue/registry.hpp"
#include "reference/swiglu.hpp"
#include "reference/swiglu_mlp.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace swiglu_mlp_fwd_oracle_test {
namespace {

HostTensor tensor(const char* name, std::vector<std::int64_t> dims, std::vector<double> values) {
  return {name, std::move(dims), std::move(values)};
}

TEST(SwigluMlpFwdOracle, MatchesHandValues) {
  // x = 2, Wg = 1, Wu = 3, Wd = 0.5: g = 2, u = 6, h = 2 sigmoid(2) 6, y = h / 2.
  const std::vector<HostTensor> in{tensor("x", {1, 1}, {2}), tensor("Wg", {1, 1}, {1}), tensor("Wu", {1, 1}, {3}),
                                   tensor("Wd", {1, 1}, {0.5})};
  const auto out = run_oracle(registered_op("swiglu_mlp_fwd"), swiglu_mlp_shape(1, 1, 1), in);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NEAR(out[0].values[0], 0.5 * 2.0 / (1.0 + std::exp(-2.0)) * 6.0, 1e-15);
}

TEST(SwigluMlpFwdOracle, EqualsDirectComposition) {
  const std::int64_t m = 3, d = 5, f = 7;
  const Op& op = registered_op("swiglu_mlp_fwd");
  const auto in = host_inputs(op.tensors(swiglu_mlp_shape(m, d, f), DType::fp32), 5);  // x, Wg, Wu, Wd
  const auto out = run_oracle(op, swiglu_mlp_shape(m, d, f), in);
  for (std::int64_t i = 0; i < m; ++i) {
    std::vector<double> h(f);
    for (std::int64_t j = 0; j < f; ++j) {
      double g = 0, u = 0;
      for (std::int64_t p = 0; p < d; ++p) {
        g += in[0].values[i * d + p] * in[1].values[j * d + p];
        u += in[0].values[i * d + p] * in[2].values[j * d + p];
      }
      h[j] = g / (1 + std::exp(-g)) * u;
    }
    for (std::int64_t c = 0; c < d; ++c) {
      double y = 0;
      for (std::int64_t j = 0; j < f; ++j) y += h[j] * in[3].values[c * f + j];
      EXPECT_NEAR(out[0].values[i * d + c], y, 1e-12) << "row " << i << " col " << c;
    }
  }
}

TEST(SwigluMlpFwdOracle, WorkCountsThreeGemmsAndEachTensorOnce) {
  const Op& op = registered_op("swiglu_mlp_fwd");
  const Shape s = swiglu_mlp_shape(8, 4, 6);
  EXPECT_EQ(op.work(s, DType::bf16).flops, 6.0 * 8 * 4 * 6);
  EXPECT_EQ(op.work(s, DType::bf16).bytes, 2.0 * (8 * 4 + 3 * 6 * 4 + 8 * 4));
}

TEST(SwigluMlpFwdOracle, OutputIsAnErrorBoundOverTheDownProjectionsTerms) {
  const Op& op = registered_op("swiglu_mlp_fwd");
  for (DType dtype : {DType::fp32, DType::fp16, DType::bf16}) {
    const auto narrow = op.tensors(swiglu_mlp_shape(4, 8, 64), dtype);
    const auto wide = op.tensors(swiglu_mlp_shape(4, 8, 16384), dtype);
    ASSERT_TRUE(narrow[4].tolerance && wide[4].tolerance);
    EXPECT_TRUE(wide[4].tolerance->is_error_bound()) << to_string(dtype);
    EXPECT_GT(wide[4].tolerance->abs_sum_scale, narrow[4].tolerance->abs_sum_scale) << to_string(dtype);
  }
  // h is stored in the dtype: the per-term share follows the dtype's unit roundoff.
  const auto bf16 = op.tensors(swiglu_mlp_shape(4, 8, 64), DType::bf16);
  const auto fp16 = op.tensors(swiglu_mlp_shape(4, 8, 64), DType::fp16);
  EXPECT_NEAR(bf16[4].tolerance->root_sum_sq_scale / fp16[4].tolerance->root_sum_sq_scale, 8.0, 1e-9);
  // The magnitudes: y = h Wd^T over f terms; |y| <= A and R <= A.
  const Shape s = swiglu_mlp_shape(3, 5, 7);
  const auto in = host_inputs(op.tensors(s, DType::fp32), 2);
  const auto out = run_oracle(op, s, in);
  ASSERT_EQ(out[0].abs_sum.size(), out[0].values.size());
  ASSERT_EQ(out[0].root_sum_sq.size(), out[0].values.size());
  for (std::size_t e = 0; e < out[0].values.size(); ++e) {
    EXPECT_LE(std::abs(out[0].values[e]), out[0].abs_sum[e] * (1 + 1e-12));
    EXPECT_LE(out[0].root_sum_sq[e], out[0].abs_sum[e] * (1 + 1e-12));
    EXPECT_GT(out[0].root_sum_sq[e], 0);
  }
}

TEST(SwigluMlpFwdOracle, ShapesAndVariantsAreRegistered) {
  const Op& op = registered_op("swiglu_mlp_fwd");
  EXPECT_EQ(op.compute_unit, "tensor");
  for (const Shape& s : op.default_shapes) EXPECT_FALSE(op.invalid(s).has_value());
  for (const Shape& s : op.edge_shapes) EXPECT_FALSE(op.invalid(s).has_value());
  EXPECT_TRUE(op.invalid(swiglu_mlp_shape(1, 0, 1)).has_value());
  int baselines = 0, fused = 0;
  for (const Variant* v : Registry::instance().variants("swiglu_mlp_fwd", false)) {
    baselines += v->role == Role::baseline;
    fused += v->role == Role::fused;
    if (v->role == Role::fused) {
      EXPECT_TRUE(v->workspace_bytes) << v->name;  // h and the packed weight are declared
      const std::size_t bytes = v->workspace_bytes(swiglu_mlp_shape(16, 8, 4), DType::bf16);
      EXPECT_GE(bytes, std::size_t{32} << 20);
    }
  }
  EXPECT_EQ(baselines, 1);
  EXPECT_EQ(fused, 2);
}

TEST(SwigluMlpFwdOracle, AxesReadMDFOnce) {
  const auto [m, d, f] = SwigluMlpAxes::of(swiglu_mlp_shape(131, 256, 1000));
  EXPECT_EQ(m, 131);
  EXPECT_EQ(d, 256);
  EXPECT_EQ(f, 1000);
}

}  // namespace
}  // namespace swiglu_mlp_fwd_oracle_test
}  // namespace kwb
