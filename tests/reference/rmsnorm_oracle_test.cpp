// The RMSNorm oracles on the host: forward and backward against values worked out by hand, the
// backward's dx and dweight against finite differences of the forward oracle, the threaded
// backward oracle against row-by-row runs, and the backward work model's bytes.
#include <gtest/gtest.h>

#include <cmath>

#include "harness/catalogue/tolerance.hpp"
#include "reference/rmsnorm.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace rmsnorm_oracle_test {
namespace {

Shape shape(std::int64_t rows, std::int64_t cols) { return Shape{{{"rows", rows}, {"cols", cols}}}; }

HostTensor tensor(const char* name, std::vector<std::int64_t> dims, std::vector<double> values) {
  return HostTensor{name, std::move(dims), std::move(values)};
}

TEST(RmsNormOracle, ForwardMatchesHandValues) {
  // x = [3, 4]: mean(x^2) = 12.5, rstd = 1/sqrt(12.5 + eps); y = x * rstd * w = [6 r, 2 r].
  const double r = 1.0 / std::sqrt(12.5 + kRmsNormEps);
  const auto y = run_oracle(registered_op("rmsnorm_fwd"), shape(1, 2),
                            {tensor("x", {1, 2}, {3, 4}), tensor("weight", {2}, {2, 0.5})});
  EXPECT_NEAR(y[0].values[0], 6 * r, 1e-12);
  EXPECT_NEAR(y[0].values[1], 2 * r, 1e-12);
  EXPECT_NEAR(y[0].values[0], 1.6970563, 1e-6);  // 6 / sqrt(12.5)
}

TEST(RmsNormOracle, BackwardMatchesHandValuesOnTwoRows) {
  // Row 0: x = [3, 4], dy = [1, -2], w = [2, 0.5]: r0 = 1/sqrt(12.5 + eps), xhat = [3 r0, 4 r0],
  //   g = w * dy = [2, -1], mean(g * xhat) = (6 r0 - 4 r0) / 2 = r0,
  //   dx = r0 * (g - xhat * r0) = r0 * [2 - 3 r0^2, -1 - 4 r0^2], dweight terms [3 r0, -8 r0].
  // Row 1: x = [1, -1], dy = [0.5, 0.5]: r1 = 1/sqrt(1 + eps), xhat = [r1, -r1], g = [1, 0.25],
  //   mean(g * xhat) = 0.375 r1, dx = r1 * [1 - 0.375 r1^2, 0.25 + 0.375 r1^2],
  //   dweight terms [0.5 r1, -0.5 r1].
  const double r0 = 1.0 / std::sqrt(12.5 + kRmsNormEps), r1 = 1.0 / std::sqrt(1.0 + kRmsNormEps);
  const auto out = run_oracle(registered_op("rmsnorm_bwd"), shape(2, 2),
                              {tensor("x", {2, 2}, {3, 4, 1, -1}), tensor("weight", {2}, {2, 0.5}),
                               tensor("dy", {2, 2}, {1, -2, 0.5, 0.5})});
  const auto& dx = out[0].values;
  const auto& dw = out[1].values;
  EXPECT_NEAR(dx[0], r0 * (2 - 3 * r0 * r0), 1e-12);
  EXPECT_NEAR(dx[1], r0 * (-1 - 4 * r0 * r0), 1e-12);
  EXPECT_NEAR(dx[2], r1 * (1 - 0.375 * r1 * r1), 1e-12);
  EXPECT_NEAR(dx[3], r1 * (0.25 + 0.375 * r1 * r1), 1e-12);
  EXPECT_NEAR(dw[0], 3 * r0 + 0.5 * r1, 1e-12);
  EXPECT_NEAR(dw[1], -8 * r0 - 0.5 * r1, 1e-12);
  // The same in plain numbers (eps is below these digits): 0.28284271 * 1.76, ...
  EXPECT_NEAR(dx[0], 0.4978032, 1e-6);
  EXPECT_NEAR(dx[1], -0.3733524, 1e-6);
  EXPECT_NEAR(dw[1], -2.7627417, 1e-6);
}

// Every x element of a few rows, and every weight element, against a central difference of
// L = sum(dy * rmsnorm_fwd(x, weight)).
void expect_gradients_match_finite_differences(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  const Op& bwd = registered_op("rmsnorm_bwd");
  const Op& fwd = registered_op("rmsnorm_fwd");
  const Shape s = shape(rows, cols);
  const auto in = host_inputs(bwd.tensors(s, DType::fp32), seed);  // x, weight, dy
  const auto grads = run_oracle(bwd, s, in);                       // dx, dweight
  const std::vector<HostTensor> fwd_inputs = {in[0], in[1]};
  const std::vector<HostTensor> cotangent = {in[2]};
  std::mt19937_64 rng(seed);
  for (int k = 0; k < 12; ++k) {
    const auto e = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(rows * cols));
    const double fd = finite_difference_vjp(fwd, s, fwd_inputs, 0, e, cotangent);
    EXPECT_NEAR(grads[0].values[e], fd, 1e-6 * (1 + std::abs(fd))) << "dx element " << e << " of " << rows << "x" << cols;
  }
  for (std::int64_t c = 0; c < cols; ++c) {
    const double fd = finite_difference_vjp(fwd, s, fwd_inputs, 1, c, cotangent);
    EXPECT_NEAR(grads[1].values[c], fd, 1e-6 * (1 + std::abs(fd))) << "dweight column " << c << " of " << rows << "x" << cols;
  }
}

TEST(RmsNormOracle, BackwardGradientsMatchFiniteDifferencesOfTheForward) {
  expect_gradients_match_finite_differences(3, 7, 11);
  expect_gradients_match_finite_differences(9, 33, 12);
  expect_gradients_match_finite_differences(1, 1, 13);  // one element: xhat = +-1, dx ~ 0
}

TEST(RmsNormOracle, ThreadedBackwardEqualsRowByRowRuns) {
  // 4096 x 512 = 2M elements: the oracle splits the rows into chunks on separate threads.
  const Op& bwd = registered_op("rmsnorm_bwd");
  const std::int64_t rows = 4096, cols = 512;
  const auto in = host_inputs(bwd.tensors(shape(rows, cols), DType::fp32), 21);
  const auto all = run_oracle(bwd, shape(rows, cols), in);
  std::vector<double> dweight(cols, 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    auto slice = [&](const HostTensor& t) {
      return tensor(t.name.c_str(), {1, cols},
                    std::vector<double>(t.values.begin() + r * cols, t.values.begin() + (r + 1) * cols));
    };
    const auto one = run_oracle(bwd, shape(1, cols), {slice(in[0]), in[1], slice(in[2])});
    for (std::int64_t c = 0; c < cols; ++c) {
      ASSERT_EQ(all[0].values[r * cols + c], one[0].values[c]) << "dx row " << r << " col " << c;
      dweight[c] += one[1].values[c];
    }
  }
  for (std::int64_t c = 0; c < cols; ++c)
    EXPECT_NEAR(all[1].values[c], dweight[c], 1e-9 * (1 + std::abs(dweight[c]))) << "dweight column " << c;
}

TEST(RmsNormOracle, BackwardWorkModelCountsDweightAsFp32) {
  const Op& bwd = registered_op("rmsnorm_bwd");
  // x, dy, dx bf16 [16, 8]; weight bf16 [8]; dweight fp32 [8].
  EXPECT_EQ(bwd.work(shape(16, 8), DType::bf16).bytes, 3 * 16 * 8 * 2 + 8 * 2 + 8 * 4);
  EXPECT_EQ(bwd.work(shape(16, 8), DType::fp32).bytes, 3 * 16 * 8 * 4 + 8 * 4 + 8 * 4);
  EXPECT_EQ(bwd.work(shape(16, 8), DType::fp16).flops, 11 * 16 * 8);
}

TEST(RmsNormOracle, BackwardBoundsScaleWithTheTermsNotWithTheOutput) {
  // dx and dweight are checked against error bounds from the magnitudes the oracle gives
  // (reference/rmsnorm_layernorm_grad_bound.hpp); the bf16 dx carries R at bf16's roundoff for
  // the baseline's bf16 w dy, the fp32 one none.
  const Op& bwd = registered_op("rmsnorm_bwd");
  const auto bf16 = bwd.tensors(shape(4, 64), DType::bf16);
  ASSERT_EQ(bf16[3].name, "dx");
  ASSERT_EQ(bf16[4].name, "dweight");
  EXPECT_GT(bf16[3].tolerance->abs_sum_scale, 0);
  EXPECT_EQ(bf16[3].tolerance->root_sum_sq_scale, kStorageBoundSafety * unit_roundoff(ElemType::bf16));
  EXPECT_EQ(bwd.tensors(shape(4, 64), DType::fp32)[3].tolerance->root_sum_sq_scale, 0);
  EXPECT_GT(bf16[4].tolerance->abs_sum_scale, 0);
  EXPECT_EQ(bf16[4].elem_type(DType::bf16), ElemType::fp32);

  // At cols = 1, x near 0: dx = r g eps / (x^2 + eps) is tiny next to its terms r g, and the
  // bound's magnitude follows the terms (r = 1 / sqrt(x^2 + eps) ~ 707 at x = 1e-3).
  const auto out = run_oracle(bwd, shape(1, 1),
                              {{"x", {1, 1}, {1e-3}}, {"weight", {1}, {1.0}}, {"dy", {1, 1}, {2.0}}});
  const double r = 1 / std::sqrt(1e-6 + kRmsNormEps), xhat = 1e-3 * r;
  EXPECT_NEAR(out[0].values[0], r * 2 * (1 - xhat * xhat), 1e-9);
  ASSERT_EQ(out[0].abs_sum.size(), 1u);
  EXPECT_NEAR(out[0].abs_sum[0], 2 * r * (2 + 3 * xhat * xhat * 2), 1e-9);  // (1 + sqrt 1) r (|g| + 3 xhat |g xhat|)
  EXPECT_GT(out[0].abs_sum[0], 3 * std::fabs(out[0].values[0]));
  ASSERT_EQ(out[1].abs_sum.size(), 1u);
  EXPECT_NEAR(out[1].abs_sum[0], 2 * xhat, 1e-12);  // |dy xhat|
}

TEST(RmsNormOracle, BackwardDefaultShapesStayVerifiableInFull) {
  // dweight makes every case verified in full on the CPU: at most 2^27 elements per tensor.
  const Op& bwd = registered_op("rmsnorm_bwd");
  for (const auto& s : bwd.default_shapes) EXPECT_LE(s.at("rows") * s.at("cols"), std::int64_t{1} << 27) << s.to_compact();
  bool has_odd_width = false;
  for (const auto& s : bwd.default_shapes) has_odd_width |= s.at("cols") % 8 != 0;
  EXPECT_TRUE(has_odd_width) << "a hidden size that is not a multiple of the bf16 vector width";
}

}  // namespace
}  // namespace rmsnorm_oracle_test
}  // namespace kwb
