// The newton_schulz tolerance against a simulation of the device: the five steps run on the host
// with every stored intermediate rounded as the variants round it (bf16, fp16, fp32 with tf32
// GEMM operands; the eager chain's roundings and the fused epilogues'), compared with the fp64
// oracle. The tolerance must admit every simulated device with room to spare, and must still
// reject the bugs a Newton-Schulz kernel can have: a step missing or extra, coefficients mixed
// up, the output left transposed. And why it stays flat: the last step's term magnitudes do not
// track the error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <utility>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/matmul_fp64.hpp"
#include "reference/newton_schulz.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace newton_schulz_tolerance_test {
namespace {

Shape shape(std::int64_t m, std::int64_t n) { return Shape{{{"rows", m}, {"cols", n}}}; }

Tolerance op_tolerance(std::int64_t m, std::int64_t n, DType dtype) {
  return *registered_op("newton_schulz").tensors(shape(m, n), dtype).at(1).tolerance;
}

// G ~ N(0, 1) as the case draws it, rounded to what the device holds.
std::vector<double> input(std::int64_t m, std::int64_t n, NsPrecision precision, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> g(static_cast<std::size_t>(m * n));
  for (double& x : g) x = ns_store(normal(rng), precision);
  return g;
}

struct Check {
  double worst_ratio = 0;     // max over elements of |err| / (atol + rtol |ref|): above 1 fails
  double max_err_over_s = 0;  // max |err| in units of the output scale 1 / sqrt(max(m, n))
  double fraction_failing = 0;
};

Check check(const std::vector<double>& got, const std::vector<double>& ref, std::int64_t m, std::int64_t n,
            Tolerance tol) {
  Check c;
  const double s = 1.0 / std::sqrt(static_cast<double>(std::max(m, n)));
  std::int64_t failing = 0;
  for (std::size_t e = 0; e < ref.size(); ++e) {
    const double err = std::abs(got[e] - ref[e]);
    const double ratio = err / (tol.atol + tol.rtol * std::abs(ref[e]));
    if (!(ratio <= 1)) ++failing;  // NaN fails too
    c.worst_ratio = std::max(c.worst_ratio, std::isnan(ratio) ? INFINITY : ratio);
    c.max_err_over_s = std::max(c.max_err_over_s, err / s);
  }
  c.fraction_failing = static_cast<double>(failing) / static_cast<double>(ref.size());
  return c;
}

DType case_dtype(NsPrecision p) {
  return p == NsPrecision::bf16 ? DType::bf16 : p == NsPrecision::fp16 ? DType::fp16 : DType::fp32;
}
const char* name(NsPrecision p) {
  return p == NsPrecision::bf16 ? "bf16" : p == NsPrecision::fp16 ? "fp16" : p == NsPrecision::tf32 ? "tf32" : "fp32";
}

// Every simulated device passes with a margin of at least 2 (the tolerance was set at 3x the
// worst simulated error over several shapes; these are a square, a wide and a tall one).
void expect_simulated_devices_pass(std::int64_t m, std::int64_t n, std::vector<std::pair<NsPrecision, NsChain>> runs) {
  for (const auto& [precision, chain] : runs) {
    const auto g = input(m, n, precision, 42);
    std::vector<double> ref(g.size()), got(g.size());
    newton_schulz_fp64(g.data(), m, n, ref.data());
    newton_schulz_emulated(g.data(), m, n, got.data(), precision, chain);
    const Check c = check(got, ref, m, n, op_tolerance(m, n, case_dtype(precision)));
    std::printf("  %lld x %lld %s %s: max |err| / s = %.4f, worst |err| / tol = %.3f\n", static_cast<long long>(m),
                static_cast<long long>(n), name(precision), chain == NsChain::eager ? "eager" : "fused",
                c.max_err_over_s, c.worst_ratio);
    EXPECT_LE(c.worst_ratio, 0.5) << m << " x " << n << " " << name(precision)
                                  << (chain == NsChain::eager ? " eager" : " fused");
  }
}

TEST(NewtonSchulzTolerance, AdmitsEverySimulatedDeviceRoundingWithMarginSquare) {
  std::vector<std::pair<NsPrecision, NsChain>> all;
  for (NsPrecision p : {NsPrecision::bf16, NsPrecision::fp16, NsPrecision::tf32, NsPrecision::fp32})
    for (NsChain c : {NsChain::eager, NsChain::fused}) all.emplace_back(p, c);
  expect_simulated_devices_pass(256, 256, all);
}

TEST(NewtonSchulzTolerance, AdmitsEverySimulatedDeviceRoundingWithMarginRectangular) {
  // The worst cases of the calibration: the eager chain in bf16 and fp16, tf32 operands.
  const std::vector<std::pair<NsPrecision, NsChain>> worst = {
      {NsPrecision::bf16, NsChain::eager}, {NsPrecision::fp16, NsChain::eager}, {NsPrecision::tf32, NsChain::fused}};
  expect_simulated_devices_pass(512, 1024, worst);
  expect_simulated_devices_pass(768, 192, worst);  // tall, aspect 4
}

// The loosest tolerance (bf16) must still fail what a broken variant would compute.
TEST(NewtonSchulzTolerance, RejectsAMissingStepWrongCoefficientsAndATransposedOutput) {
  for (const auto& [m, n] : {std::pair<std::int64_t, std::int64_t>{256, 256}, {384, 128}}) {
    const auto g = input(m, n, NsPrecision::bf16, 7);
    std::vector<double> ref(g.size()), got(g.size());
    newton_schulz_fp64(g.data(), m, n, ref.data());
    const Tolerance tol = op_tolerance(m, n, DType::bf16);
    auto expect_rejected = [&](const char* bug, const std::vector<double>& out) {
      const Check c = check(out, ref, m, n, tol);
      std::printf("  %lld x %lld %-14s: %.2f%% of the elements fail, max |err| / s = %.3g\n",
                  static_cast<long long>(m), static_cast<long long>(n), bug, 100 * c.fraction_failing,
                  c.max_err_over_s);
      EXPECT_GT(c.fraction_failing, 1e-3) << bug << " at " << m << " x " << n;
    };
    NsParams p;
    p.steps = 4;
    newton_schulz_fp64(g.data(), m, n, got.data(), p);
    expect_rejected("4 steps", got);
    p = {};
    p.steps = 6;
    newton_schulz_fp64(g.data(), m, n, got.data(), p);
    expect_rejected("6 steps", got);
    p = {};
    std::swap(p.a, p.c);
    newton_schulz_fp64(g.data(), m, n, got.data(), p);
    expect_rejected("a and c swapped", got);
    p = {};
    p.b = -p.b;
    newton_schulz_fp64(g.data(), m, n, got.data(), p);
    expect_rejected("b's sign lost", got);
    // The result left in the work layout: the r x c matrix Y written flat into [m, n]. In the
    // square case, X^T instead of X.
    const std::int64_t c = std::max(m, n);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const std::int64_t e = i * n + j;              // where X[i][j] belongs
        const std::int64_t yi = e / c, yj = e % c;     // what a flat r x c Y puts there
        got[e] = m > n ? ref[yj * n + yi] : ref[j * n + i];
      }
    expect_rejected("transposed out", got);
  }
}

// Why X keeps a flat tolerance in units of s rather than a per-element bound over the last
// step's terms (reference/newton_schulz.cpp): R = sqrt((a Y_ij)^2 + sum_k (B_ik Y_kj)^2) varies
// ~50x across elements while the simulated device's error does not follow it, so a bound in R
// with the flat one's margin would be far looser than it at the large-R elements.
TEST(NewtonSchulzTolerance, TheLastStepsTermMagnitudesDoNotTrackTheError) {
  const std::int64_t m = 256, n = 256;
  const auto g = input(m, n, NsPrecision::bf16, 42);
  std::vector<double> ref(g.size()), got(g.size()), y(g.size());
  newton_schulz_fp64(g.data(), m, n, ref.data());
  newton_schulz_emulated(g.data(), m, n, got.data(), NsPrecision::bf16, NsChain::eager);
  NsParams four;
  four.steps = 4;
  newton_schulz_fp64(g.data(), m, n, y.data(), four);  // Y, the last step's input
  std::vector<double> a(m * m), aa(m * m);
  ref::matmul_fp64(m, m, n, {y.data(), n}, {y.data(), n, true}, a.data(), m);
  ref::matmul_fp64(m, m, m, {a.data(), m}, {a.data(), m}, aa.data(), m);
  const double s = 1.0 / std::sqrt(static_cast<double>(n));
  double r_min = INFINITY, r_max = 0, err_over_r = 0, err_over_s = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double r2 = kNsA * kNsA * y[i * n + j] * y[i * n + j];
      for (std::int64_t k = 0; k < m; ++k) {
        const double b = kNsB * a[i * m + k] + kNsC * aa[i * m + k];
        r2 += b * b * y[k * n + j] * y[k * n + j];
      }
      const double r = std::sqrt(r2), err = std::abs(got[i * n + j] - ref[i * n + j]);
      r_min = std::min(r_min, r), r_max = std::max(r_max, r);
      err_over_r = std::max(err_over_r, err / r), err_over_s = std::max(err_over_s, err / s);
    }
  std::printf("  R / s in [%.2f, %.2f]; max |err| / R %.3f, max |err| / s %.3f\n", r_min / s, r_max / s, err_over_r,
              err_over_s);
  EXPECT_GT(r_max / r_min, 20.0);
  // Scaled to admit the worst element as the flat bound does, R's bound at the largest R:
  EXPECT_GT(err_over_r * (r_max / s) / err_over_s, 5.0) << "times the flat bound";
}

}  // namespace
}  // namespace newton_schulz_tolerance_test
}  // namespace kwb
