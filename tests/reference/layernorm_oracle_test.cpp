// The layernorm_fwd and layernorm_bwd oracles on the host: hand-computed rows, the two-pass
// variance (exact where E[x^2] - E[x]^2 is not), gradients against finite differences of the
// forward oracle, the threaded backward against the same rows run one slice at a time, the work
// models' bytes, the weight-gradient tolerance against an fp32 sum, and the default shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/layernorm.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace layernorm_oracle_test {
namespace {

Shape shape(std::int64_t rows, std::int64_t cols) { return Shape{{{"rows", rows}, {"cols", cols}}}; }

HostTensor tensor(const char* name, std::vector<std::int64_t> dims, std::vector<double> values) {
  return HostTensor{name, std::move(dims), std::move(values)};
}

TEST(LayerNormOracle, ForwardMatchesHandComputedRows) {
  // Row 0: mean 2.5, deviations -1.5 -0.5 0.5 1.5, variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25.
  // Row 1: mean 2.5, deviations -4.5 -2.5 -0.5 7.5, variance (20.25 + 6.25 + 0.25 + 56.25) / 4 = 20.75.
  const std::vector<double> w = {1, 2, 0.5, -1}, b = {0.1, -0.2, 0.3, 0};
  const auto out = run_oracle(registered_op("layernorm_fwd"), shape(2, 4),
                              {tensor("x", {2, 4}, {1, 2, 3, 4, -2, 0, 2, 10}), tensor("weight", {4}, w),
                               tensor("bias", {4}, b)});
  const double r0 = 1 / std::sqrt(1.25 + 1e-5), r1 = 1 / std::sqrt(20.75 + 1e-5);
  const double dev[8] = {-1.5, -0.5, 0.5, 1.5, -4.5, -2.5, -0.5, 7.5};
  for (int e = 0; e < 8; ++e) {
    const double expected = dev[e] * (e < 4 ? r0 : r1) * w[e % 4] + b[e % 4];
    EXPECT_NEAR(out[0].values[e], expected, 1e-12) << "element " << e;
  }
  EXPECT_EQ(kLayerNormEps, 1e-5) << "PyTorch's default eps";
}

TEST(LayerNormOracle, ForwardVarianceIsTwoPassSoALargeMeanDoesNotCancelIt) {
  // x = 1e8 + {1, 2, 3, 4} is exact in fp64, but E[x^2] ~ 1e16 leaves E[x^2] - E[x]^2 with an
  // absolute error ~1 against a variance of 1.25. The two-pass form gives the shifted row's y.
  const Op& fwd = registered_op("layernorm_fwd");
  const std::vector<double> w = {1, 1, 1, 1}, b = {0, 0, 0, 0};
  const auto shifted = run_oracle(fwd, shape(1, 4),
                                  {tensor("x", {1, 4}, {1e8 + 1, 1e8 + 2, 1e8 + 3, 1e8 + 4}), tensor("weight", {4}, w),
                                   tensor("bias", {4}, b)});
  const auto plain = run_oracle(fwd, shape(1, 4),
                                {tensor("x", {1, 4}, {1, 2, 3, 4}), tensor("weight", {4}, w), tensor("bias", {4}, b)});
  for (int e = 0; e < 4; ++e) EXPECT_NEAR(shifted[0].values[e], plain[0].values[e], 1e-9) << "element " << e;
}

TEST(LayerNormOracle, BackwardMatchesHandComputedRow) {
  // x = {0, 2}: mean 1, xhat = {-r, r} with r = 1 / sqrt(1 + eps), rstd = r. With dy = {1, -1}
  // and w = 1: g = dy, mean(g) = 0, mean(g * xhat) = -r, so dx = r * (dy - xhat * -r)
  // = {r (1 - r^2), -r (1 - r^2)}: nearly zero, as a shift and a scale of x leave y unchanged.
  const double r = 1 / std::sqrt(1 + 1e-5);
  const auto out = run_oracle(registered_op("layernorm_bwd"), shape(1, 2),
                              {tensor("x", {1, 2}, {0, 2}), tensor("weight", {2}, {1, 1}), tensor("dy", {1, 2}, {1, -1})});
  EXPECT_NEAR(out[0].values[0], r * (1 - r * r), 1e-15);
  EXPECT_NEAR(out[0].values[1], -r * (1 - r * r), 1e-15);
  EXPECT_NEAR(out[1].values[0], -r, 1e-15);  // dweight = dy * xhat
  EXPECT_NEAR(out[1].values[1], -r, 1e-15);
  EXPECT_EQ(out[2].values[0], 1.0);  // dbias = dy
  EXPECT_EQ(out[2].values[1], -1.0);

  // Two rows: dweight and dbias add over rows. Row 1: x = {5, 1} (xhat = {r', -r'}, r' = 1 / sqrt(4 + eps) * 2).
  const double r2 = 2 / std::sqrt(4 + 1e-5);
  const auto two = run_oracle(registered_op("layernorm_bwd"), shape(2, 2),
                              {tensor("x", {2, 2}, {0, 2, 5, 1}), tensor("weight", {2}, {0.5, 3}),
                               tensor("dy", {2, 2}, {1, -1, 2, 4})});
  EXPECT_NEAR(two[1].values[0], 1 * -r + 2 * r2, 1e-12);
  EXPECT_NEAR(two[1].values[1], -1 * r + 4 * -r2, 1e-12);
  EXPECT_NEAR(two[2].values[0], 3.0, 1e-15);
  EXPECT_NEAR(two[2].values[1], 3.0, 1e-15);
}

TEST(LayerNormOracle, BackwardDxSumsToZeroOverEveryRow) {
  // sum_c dx = rstd * (sum g - cols mean(g) - mean(g xhat) sum xhat) = 0, since sum xhat = 0.
  const Op& bwd = registered_op("layernorm_bwd");
  const Shape s = shape(9, 301);
  const auto in = host_inputs(bwd.tensors(s, DType::fp32), 11);
  const auto out = run_oracle(bwd, s, in);
  for (int r = 0; r < 9; ++r) {
    double sum = 0, scale = 0;
    for (int c = 0; c < 301; ++c) sum += out[0].values[r * 301 + c], scale += std::abs(out[0].values[r * 301 + c]);
    EXPECT_GT(scale, 1.0) << "row " << r;
    EXPECT_NEAR(sum, 0.0, 1e-12 * scale) << "row " << r;
  }
}

TEST(LayerNormOracle, BackwardMatchesFiniteDifferencesOfTheForwardForEveryInput) {
  const Op& fwd = registered_op("layernorm_fwd");
  const Op& bwd = registered_op("layernorm_bwd");
  const Shape s = shape(5, 37);
  const auto in = host_inputs(bwd.tensors(s, DType::fp32), 3);  // x, weight, dy
  const auto bias = host_inputs(fwd.tensors(s, DType::fp32), 4)[2];
  const auto grads = run_oracle(bwd, s, in);  // dx, dweight, dbias
  const std::vector<HostTensor> fwd_in = {in[0], in[1], bias};
  const std::vector<HostTensor> cotangent = {in[2]};
  auto check = [&](std::size_t input, std::size_t grad, std::int64_t e) {
    const double fd = finite_difference_vjp(fwd, s, fwd_in, input, e, cotangent);
    EXPECT_NEAR(grads[grad].values[e], fd, 1e-6 * (1 + std::abs(fd))) << "input " << input << " element " << e;
  };
  std::mt19937_64 rng(17);
  for (int k = 0; k < 24; ++k) check(0, 0, static_cast<std::int64_t>(rng() % (5 * 37)));  // dx
  for (std::int64_t c = 0; c < 37; ++c) {
    check(1, 1, c);  // dweight
    check(2, 2, c);  // dbias
  }
}

TEST(LayerNormOracle, ThreadedBackwardEqualsTheSameRowsRunSliceBySlice) {
  // 600 x 4000 runs in several row chunks on several threads; slices of 100 rows run in one.
  const Op& bwd = registered_op("layernorm_bwd");
  const std::int64_t rows = 600, cols = 4000, slice = 100;
  const auto in = host_inputs(bwd.tensors(shape(rows, cols), DType::fp32), 21);
  const auto whole = run_oracle(bwd, shape(rows, cols), in);
  std::vector<double> dw(cols, 0.0), db(cols, 0.0);
  for (std::int64_t r0 = 0; r0 < rows; r0 += slice) {
    auto rows_of = [&](const HostTensor& t) {
      return tensor(t.name.c_str(), {slice, cols},
                    std::vector<double>(t.values.begin() + r0 * cols, t.values.begin() + (r0 + slice) * cols));
    };
    const auto part = run_oracle(bwd, shape(slice, cols), {rows_of(in[0]), in[1], rows_of(in[2])});
    for (std::int64_t e = 0; e < slice * cols; ++e)
      ASSERT_EQ(part[0].values[e], whole[0].values[r0 * cols + e]) << "dx row " << r0 + e / cols;
    for (std::int64_t c = 0; c < cols; ++c) dw[c] += part[1].values[c], db[c] += part[2].values[c];
  }
  for (std::int64_t c = 0; c < cols; ++c) {
    EXPECT_NEAR(whole[1].values[c], dw[c], 1e-10 * (1 + std::abs(dw[c]))) << "dweight " << c;
    EXPECT_NEAR(whole[2].values[c], db[c], 1e-10 * (1 + std::abs(db[c]))) << "dbias " << c;
  }
}

TEST(LayerNormOracle, WorkModelsCountEachTensorOnceAtItsOwnElementSize) {
  const Shape s = shape(16, 8);
  // Forward: x, y [16, 8] and weight, bias [8] in the case dtype.
  EXPECT_EQ(registered_op("layernorm_fwd").work(s, DType::bf16).bytes, (2 * 16 * 8 + 2 * 8) * 2);
  EXPECT_EQ(registered_op("layernorm_fwd").work(s, DType::fp32).bytes, (2 * 16 * 8 + 2 * 8) * 4);
  // Backward: x, dy, dx [16, 8] and weight [8] in the case dtype; dweight, dbias [8] in fp32.
  EXPECT_EQ(registered_op("layernorm_bwd").work(s, DType::bf16).bytes, (3 * 16 * 8 + 8) * 2 + 2 * 8 * 4);
  EXPECT_EQ(registered_op("layernorm_bwd").work(s, DType::fp16).bytes, (3 * 16 * 8 + 8) * 2 + 2 * 8 * 4);
  EXPECT_EQ(registered_op("layernorm_bwd").work(s, DType::fp32).bytes, (3 * 16 * 8 + 8) * 4 + 2 * 8 * 4);
  EXPECT_GT(registered_op("layernorm_bwd").work(s, DType::bf16).flops,
            registered_op("layernorm_fwd").work(s, DType::bf16).flops);
}

TEST(LayerNormOracle, WeightGradientBoundCoversAnFp32SumOverAllRows) {
  // dweight sums 16384 terms dy * xhat of size ~1; a plain sequential fp32 sum (a worse order
  // than the kernels' per-block partials) must stay inside the bound the op declares, with the
  // magnitude A = sum |term| the oracle gives.
  const Shape s = shape(16384, 512);
  const auto specs = registered_op("layernorm_bwd").tensors(s, DType::bf16);
  ASSERT_EQ(specs[4].name, "dweight");
  const Tolerance tol = tolerance_for(specs[4], DType::bf16);
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal(0.0, 1.0);
  double worst = 0;
  for (int c = 0; c < 512; ++c) {
    float sum_f = 0;
    double sum_d = 0, abs_sum = 0;
    for (int r = 0; r < 16384; ++r) {
      const float term = static_cast<float>(normal(rng) * normal(rng));
      sum_f += term;
      sum_d += term;
      abs_sum += std::abs(term);
    }
    const double err = std::abs(sum_f - sum_d);
    const double allowed = tol.atol + tol.rtol * std::abs(sum_d) + tol.abs_sum_scale * abs_sum;
    EXPECT_LE(err, allowed) << "column " << c;
    worst = std::max(worst, err / allowed);
  }
  EXPECT_GT(worst, 0.01) << "the bound should not be orders of magnitude above the error it covers";
}

TEST(LayerNormOracle, DefaultShapesHoldThePeerShapeAndKeepTheBackwardVerifiableInFull) {
  const auto& fwd = registered_op("layernorm_fwd").default_shapes;
  EXPECT_NE(std::find(fwd.begin(), fwd.end(), shape(16384, 4096)), fwd.end()) << "F.layer_norm's shape";
  bool odd = false;
  for (const auto& s : fwd) odd = odd || s.at("cols") % 8 != 0;
  EXPECT_TRUE(odd) << "a hidden size that is not a multiple of the 16-byte vector";
  for (const auto& s : registered_op("layernorm_bwd").default_shapes)
    EXPECT_LE(s.at("rows") * s.at("cols"), std::int64_t{128} << 20) << s.to_compact();
}

}  // namespace
}  // namespace layernorm_oracle_test
}  // namespace kwb
