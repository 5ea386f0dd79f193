// The Newton-Schulz oracle on the host against cases worked out by hand: a 1 x 1 matrix, a
// diagonal one (each singular value through the scalar map), semi-orthogonal and orthogonal
// inputs (p(1) = a + b + c per step), the tall path (transposed in, transposed out), the
// op's work model and its registered variants.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "harness/catalogue/registry.hpp"
#include "reference/newton_schulz.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace newton_schulz_oracle_test {
namespace {

Shape shape(std::int64_t m, std::int64_t n) { return Shape{{{"rows", m}, {"cols", n}}}; }

std::vector<double> oracle(std::int64_t m, std::int64_t n, std::vector<double> g) {
  const auto out = run_oracle(registered_op("newton_schulz"), shape(m, n), {HostTensor{"G", {m, n}, std::move(g)}});
  return out.at(0).values;
}

// p applied `steps` times.
double poly_times(double s, int steps = kNsSteps) {
  for (int i = 0; i < steps; ++i) s = ns_poly(s);
  return s;
}

std::vector<double> random_matrix(std::int64_t count, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> v(static_cast<std::size_t>(count));
  for (double& x : v) x = normal(rng);
  return v;
}

TEST(NewtonSchulzOracle, OneByOneIsTheSignTimesFiveStepsOfThePolynomial) {
  for (double x : {-2.5, 0.3}) {
    const double s0 = std::abs(x) / (std::abs(x) + kNsEps);
    EXPECT_NEAR(oracle(1, 1, {x})[0], std::copysign(poly_times(s0), x), 1e-13) << "x " << x;
  }
}

TEST(NewtonSchulzOracle, PolynomialOfOneIsTheSumOfTheCoefficients) {
  EXPECT_DOUBLE_EQ(ns_poly(1.0), kNsA + kNsB + kNsC);
  EXPECT_NEAR(ns_poly(1.0), 0.701, 1e-12);
}

TEST(NewtonSchulzOracle, DiagonalStaysDiagonalWithTheMapOnEachSingularValue) {
  // 3 x 5 with diagonal (3, -1, 0.5): ||G||_F = sqrt(10.25); singular values |d_i| / (norm + eps).
  const double d[3] = {3, -1, 0.5};
  std::vector<double> g(15, 0.0);
  for (int i = 0; i < 3; ++i) g[i * 5 + i] = d[i];
  const double norm = std::sqrt(10.25) + kNsEps;
  for (bool tall : {false, true}) {  // and its 5 x 3 transpose
    std::vector<double> gt(15, 0.0);
    for (int i = 0; i < 3; ++i) gt[i * 3 + i] = d[i];
    const auto x = tall ? oracle(5, 3, gt) : oracle(3, 5, g);
    const int cols = tall ? 3 : 5;
    for (int i = 0; i < (tall ? 5 : 3); ++i)
      for (int j = 0; j < cols; ++j) {
        const double expected = i == j ? std::copysign(poly_times(std::abs(d[i]) / norm), d[i]) : 0.0;
        EXPECT_NEAR(x[i * cols + j], expected, 1e-14) << (tall ? "tall " : "wide ") << i << "," << j;
      }
  }
}

TEST(NewtonSchulzOracle, SemiOrthogonalRowIsMappedByThePolynomialOfOneEachStep) {
  // One row: its only singular value is |v| / (|v| + eps) ~ 1, so each step multiplies by ~p(1).
  const auto v = random_matrix(8, 3);
  double len = 0;
  for (double e : v) len += e * e;
  len = std::sqrt(len);
  const double scale = poly_times(len / (len + kNsEps));
  const auto x = oracle(1, 8, v);
  for (int j = 0; j < 8; ++j) EXPECT_NEAR(x[j], v[j] / len * scale, 1e-14) << j;
  EXPECT_NEAR(scale, poly_times(1.0), 1e-6);
}

TEST(NewtonSchulzOracle, OrthogonalSquareIsScaledByTheMapOfOneOverSqrtN) {
  // A signed permutation Q (4 x 4): ||Q||_F = 2, X0 = Q / (2 + eps), X5 = p^5(1 / (2 + eps)) Q.
  const int perm[4] = {2, 0, 3, 1};
  const double sign[4] = {1, -1, -1, 1};
  std::vector<double> q(16, 0.0);
  for (int i = 0; i < 4; ++i) q[i * 4 + perm[i]] = sign[i];
  const double scale = poly_times(1.0 / (2.0 + kNsEps));
  const auto x = oracle(4, 4, q);
  for (int e = 0; e < 16; ++e) EXPECT_NEAR(x[e], scale * q[e], 1e-14) << e;
}

TEST(NewtonSchulzOracle, TallMatrixIsTheTransposeOfItsWideTranspose) {
  const std::int64_t m = 7, n = 3;
  const auto g = random_matrix(m * n, 11);
  std::vector<double> gt(g.size());
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) gt[j * m + i] = g[i * n + j];
  const auto tall = oracle(m, n, g), wide = oracle(n, m, gt);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) EXPECT_NEAR(tall[i * n + j], wide[j * m + i], 1e-13) << i << "," << j;
}

TEST(NewtonSchulzOracle, TransposingTheTallCaseChangesOnlyTheCostNotTheMath) {
  // p(X) = a X + b (X X^T) X + c (X X^T)^2 X = X (a + b X^T X + c (X^T X)^2): the same matrix on
  // either side; Muon transposes so that the Gram matrix is the small one.
  const std::int64_t m = 9, n = 4;
  const auto g = random_matrix(m * n, 5);
  std::vector<double> plain(g.size()), direct(g.size());
  newton_schulz_fp64(g.data(), m, n, plain.data());
  NsParams no_transpose;
  no_transpose.transpose_tall = false;
  newton_schulz_fp64(g.data(), m, n, direct.data(), no_transpose);
  for (std::size_t e = 0; e < g.size(); ++e) EXPECT_NEAR(plain[e], direct[e], 1e-12) << e;
}

TEST(NewtonSchulzOracle, WorkModelCountsTheThreeGemmsOfEachStepAndEachTensorOnce) {
  const Op& op = registered_op("newton_schulz");
  const double r = 1024, c = 4096;
  const double per_step = 4 * r * r * c + 2 * r * r * r + 3 * r * r + 2 * r * c;
  for (const Shape& s : {shape(1024, 4096), shape(4096, 1024)}) {
    const WorkModel w = op.work(s, DType::bf16);
    EXPECT_DOUBLE_EQ(w.flops, 5 * per_step + 3 * r * c);
    EXPECT_DOUBLE_EQ(w.bytes, 2 * r * c * 2);
  }
  EXPECT_EQ(op.compute_unit, "tensor");
  EXPECT_TRUE(op.sample_axis.empty());  // each step needs all of X
}

TEST(NewtonSchulzOracle, ToleranceFollowsTheOutputScaleOneOverSqrtMaxSide) {
  const Op& op = registered_op("newton_schulz");
  auto atol = [&](std::int64_t m, std::int64_t n, DType t) { return op.tensors(shape(m, n), t).at(1).tolerance->atol; };
  // bf16 ~0.75 / sqrt(max(m, n)): the output's elements are ~0.9 / sqrt(max(m, n)).
  EXPECT_NEAR(atol(1024, 1024, DType::bf16) * 32, 0.75, 0.05);
  EXPECT_NEAR(atol(1024, 4096, DType::bf16), atol(4096, 1024, DType::bf16), 1e-15);
  EXPECT_LT(atol(4096, 4096, DType::bf16), atol(1024, 1024, DType::bf16));
  EXPECT_LT(atol(1024, 1024, DType::fp16), atol(1024, 1024, DType::bf16) / 5);
  EXPECT_LT(atol(1024, 1024, DType::fp32), atol(1024, 1024, DType::bf16) / 5);
}

TEST(NewtonSchulzOracle, BaselineAndFusedVariantsAreRegisteredWithTheirWorkspace) {
  const auto variants = Registry::instance().variants("newton_schulz", false);
  ASSERT_GE(variants.size(), 2u);
  bool baseline = false, fused = false;
  for (const Variant* v : variants) {
    baseline |= v->role == Role::baseline;
    fused |= v->role == Role::fused;
    ASSERT_TRUE(v->workspace_bytes) << v->name;
    EXPECT_GT(v->workspace_bytes(shape(4096, 4096), DType::bf16), std::size_t{3} * 4096 * 4096 * 2) << v->name;
  }
  EXPECT_TRUE(baseline);
  EXPECT_TRUE(fused);
}

}  // namespace
}  // namespace newton_schulz_oracle_test
}  // namespace kwb
