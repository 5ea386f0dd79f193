// The mHC-lite RMSNorm + projection oracles on the host: forward and backward against values
// worked out by hand, the backward against finite differences of the registered forward (with
// the forward's own r), the work model, the tolerances' dependence on K, and the variants.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "harness/catalogue/registry.hpp"
#include "reference/mhc.hpp"
#include "reference/mhc_rmsnorm_project.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace mhc_rmsnorm_project_oracle_test {
namespace {

constexpr std::int64_t kP = kMhcProjectWidth;

HostTensor tensor(const char* name, std::vector<std::int64_t> dims, std::vector<double> values) {
  return {name, std::move(dims), std::move(values)};
}

// One token, C = 1 (K = 4): h = (1, 2, 2, 4), sum of squares 25, mean 6.25, r = 1 / 2.5.
// W[k][p] = 1 where k == p % 4 (p < 31), and column 31 all ones: Z_p = r h_{p % 4}, Z_31 = r sum h.
HostTensor hand_weight() {
  std::vector<double> w(4 * kP, 0.0);
  for (std::int64_t k = 0; k < 4; ++k) {
    for (std::int64_t p = 0; p < kP - 1; ++p) w[k * kP + p] = p % 4 == k ? 1.0 : 0.0;
    w[k * kP + kP - 1] = 1.0;
  }
  return tensor("W", {4, kP}, std::move(w));
}

TEST(MhcRmsnormProjectOracle, ForwardMatchesHandValues) {
  const std::vector<HostTensor> in{tensor("H", {1, 4, 1}, {1, 2, 2, 4}), hand_weight()};
  const auto out = run_oracle(registered_op("mhc_rmsnorm_project_fwd"), mhc_shape(1, 1), in);
  ASSERT_EQ(out.size(), 2u);
  const double r = 1.0 / std::sqrt(6.25 + kMhcRmsEps);
  EXPECT_DOUBLE_EQ(out[1].values[0], r);
  EXPECT_NEAR(r, 0.4, 1e-7);
  const double h[4] = {1, 2, 2, 4};
  for (std::int64_t p = 0; p < kP - 1; ++p) EXPECT_DOUBLE_EQ(out[0].values[p], r * h[p % 4]) << "p " << p;
  EXPECT_DOUBLE_EQ(out[0].values[kP - 1], 9 * r);
}

TEST(MhcRmsnormProjectOracle, BackwardMatchesHandValues) {
  // dZ = e_0: g = W[:, 0] = (1, 0, 0, 0), s = h.g = 1; with r = 0.5, r^3 s / K = 1/32:
  // dh = r g - h / 32 = (0.5 - 1/32, -2/32, -2/32, -4/32).
  std::vector<double> dz(kP, 0.0);
  dz[0] = 1;
  const std::vector<HostTensor> in{tensor("H", {1, 4, 1}, {1, 2, 2, 4}), hand_weight(), tensor("r", {1}, {0.5}),
                                   tensor("dZ", {1, kP}, dz)};
  const auto out = run_oracle(registered_op("mhc_rmsnorm_project_bwd_dx"), mhc_shape(1, 1), in);
  ASSERT_EQ(out.size(), 1u);
  const double expected[4] = {0.5 - 1.0 / 32, -2.0 / 32, -2.0 / 32, -4.0 / 32};
  for (int k = 0; k < 4; ++k) EXPECT_DOUBLE_EQ(out[0].values[k], expected[k]) << "k " << k;
}

TEST(MhcRmsnormProjectOracle, BackwardEqualsFiniteDifferencesOfForwardWithItsOwnR) {
  for (const Shape& s : {mhc_shape(3, 5), mhc_shape(2, 1)}) {
    const Op& fwd = registered_op("mhc_rmsnorm_project_fwd");
    const Op& bwd = registered_op("mhc_rmsnorm_project_bwd_dx");
    auto in = host_inputs(bwd.tensors(s, DType::fp32), 17);  // H, W, r (replaced below), dZ
    const auto fwd_out = run_oracle(fwd, s, {in[0], in[1]});
    in[2].values = fwd_out[1].values;  // the forward's r, as the stack saves it
    const auto grads = run_oracle(bwd, s, in);
    const std::int64_t n = in[0].values.size();
    std::mt19937_64 rng(5);
    std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
    for (int trial = 0; trial < 10; ++trial) {
      const std::int64_t e = pick(rng);
      // d/dH[e] of sum_p dZ[p] Z[p] (cotangent on Z only, the forward's output 0).
      const double fd = finite_difference_vjp(fwd, s, {in[0], in[1]}, 0, e, {in[3]});
      const double analytic = grads[0].values[static_cast<std::size_t>(e)];
      EXPECT_NEAR(analytic, fd, 1e-6 * (1 + std::abs(fd))) << "C " << s.at("channels") << " element " << e;
      EXPECT_NE(analytic, 0.0);
    }
  }
}

TEST(MhcRmsnormProjectOracle, WorkCountsEachTensorOnceAndTheProjectionFlops) {
  const Shape s = mhc_shape(16, 8);  // K = 32
  const double h_bf16 = 16 * 4 * 8 * 2, w_bf16 = 32 * kP * 2, z = 16 * kP * 4, r = 16 * 4;
  const Op& fwd = registered_op("mhc_rmsnorm_project_fwd");
  EXPECT_EQ(fwd.work(s, DType::bf16).bytes, h_bf16 + w_bf16 + z + r);
  EXPECT_EQ(fwd.work(s, DType::fp32).bytes, 2 * h_bf16 + 2 * w_bf16 + z + r);
  EXPECT_EQ(fwd.work(s, DType::bf16).flops, 2.0 * 16 * 32 * kP + 2 * 16 * 32 + 16 * kP);
  const Op& bwd = registered_op("mhc_rmsnorm_project_bwd_dx");
  EXPECT_EQ(bwd.work(s, DType::bf16).bytes, 2 * h_bf16 + w_bf16 + r + z);  // H, W, r, dZ, dH
  EXPECT_EQ(bwd.work(s, DType::bf16).flops, 2.0 * 16 * 32 * kP + 5 * 16 * 32);
}

TEST(MhcRmsnormProjectOracle, TolerancesGrowWithTheFlatLengthAndCoefficientsAreFp32) {
  for (const char* name : {"mhc_rmsnorm_project_fwd", "mhc_rmsnorm_project_bwd_dx"}) {
    const Op& op = registered_op(name);
    const auto narrow = op.tensors(mhc_shape(4, 8), DType::fp32);
    const auto wide = op.tensors(mhc_shape(4, 4096), DType::fp32);
    for (std::size_t i = 0; i < narrow.size(); ++i) {
      EXPECT_EQ(narrow[i].sample_dim, narrow[i].name == "W" ? -1 : 0) << name << " " << narrow[i].name;
      if (!narrow[i].is_output) continue;
      ASSERT_TRUE(narrow[i].tolerance.has_value()) << name << " " << narrow[i].name;
      const Tolerance& w = *wide[i].tolerance;
      const Tolerance& n = *narrow[i].tolerance;
      if (n.is_error_bound())  // dH: the fp32 chains grow with K; Z: the MMA blocks
        EXPECT_GT(w.abs_sum_scale + w.root_sum_sq_scale, n.abs_sum_scale + n.root_sum_sq_scale)
            << name << " " << narrow[i].name;
      else
        EXPECT_GT(w.rtol, n.rtol) << name << " " << narrow[i].name;
    }
  }
  const auto fwd = registered_op("mhc_rmsnorm_project_fwd").tensors(mhc_shape(4, 8), DType::bf16);
  EXPECT_EQ(fwd[2].elem_type(DType::bf16), ElemType::fp32);  // Z
  EXPECT_EQ(fwd[3].elem_type(DType::bf16), ElemType::fp32);  // r
}

TEST(MhcRmsnormProjectOracle, ShapesAndVariantsAreRegistered) {
  for (const char* name : {"mhc_rmsnorm_project_fwd", "mhc_rmsnorm_project_bwd_dx"}) {
    const Op& op = registered_op(name);
    for (const Shape& s : op.default_shapes) EXPECT_FALSE(op.invalid(s).has_value());
    for (const Shape& s : op.edge_shapes) EXPECT_FALSE(op.invalid(s).has_value());
    EXPECT_TRUE(op.invalid(mhc_shape(0, 8)).has_value());
    bool baseline = false, fused = false;
    for (const Variant* v : Registry::instance().variants(name, false)) {
      baseline = baseline || v->role == Role::baseline;
      fused = fused || v->role == Role::fused;
      if (v->role == Role::fused) EXPECT_FALSE(v->tunables.empty()) << v->name;
    }
    EXPECT_TRUE(baseline) << name;
    EXPECT_TRUE(fused) << name;
  }
}

}  // namespace
}  // namespace mhc_rmsnorm_project_oracle_test
}  // namespace kwb
