// qk_norm_fwd's and qk_norm_bwd's error bounds (reference/qk_norm.cpp) against CPU simulations
// of their kernels, checked by the Verifier as a device output is: the fused kernels and the
// eager baselines stay inside, and a kernel whose norm drops the tail of the head vector (the
// 4 elements past the last 8-wide pack at head_dim 100) fails in most elements, where the
// table's flat bf16 tolerance caught under 2% of them.
//
// Simulated, in float from the seeded inputs rounded to the dtype:
//   fused fwd: fp32 sum of squares, r = 1 / sqrt (rsqrtf's 2 ulp applied, alternating sign),
//     y = x r w rounded once; eager fwd: x r rounded to the dtype, then times w rounded again;
//   fused bwd: dot = sum dy w x, c = r^3 dot, dx = r dy w - x c rounded once; eager bwd: the
//     autograd chain g = dy w, g r, -0.5 (sum g x) r^3 2 x, summed, rounded once.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "reference/qk_norm.hpp"
#include "tests/reference/simulated_output_check.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace qk_norm_error_bound_test {
namespace {

Shape qk_shape(std::int64_t tokens, std::int64_t heads, std::int64_t kv_heads, std::int64_t head_dim) {
  return Shape{{{"tokens", tokens}, {"heads", heads}, {"kv_heads", kv_heads}, {"head_dim", head_dim}}};
}

std::vector<HostTensor> device_inputs(const Op& op, const Shape& s, DType dtype, std::uint64_t seed) {
  auto in = host_inputs(op.tensors(s, dtype), seed);
  for (auto& t : in)
    for (double& x : t.values) x = round_to_dtype(x, dtype);
  return in;
}

enum class Kernel { fused, eager, tail_dropped };

// rsqrtf's error (up to 2 ulp), with a sign that alternates between head vectors.
float rsqrt_like_device(float x, std::int64_t vector) {
  const float r = 1.0f / std::sqrt(x);
  return r * (1.0f + (vector % 2 ? 2.0f : -2.0f) * std::ldexp(1.0f, -23));
}

// y for `vectors` head vectors of x (weights w), as `kernel` computes it.
std::vector<double> simulate_fwd(Kernel kernel, const std::vector<double>& x, const std::vector<double>& w,
                                 std::int64_t vectors, std::int64_t dim, ElemType t) {
  std::vector<double> y(x.size());
  const std::int64_t summed = kernel == Kernel::tail_dropped ? dim / 8 * 8 : dim;
  for (std::int64_t v = 0; v < vectors; ++v) {
    float sum_sq = 0;
    for (std::int64_t e = 0; e < summed; ++e) sum_sq += static_cast<float>(x[v * dim + e] * x[v * dim + e]);
    const float r = rsqrt_like_device(sum_sq + static_cast<float>(kQkNormEps), v);
    for (std::int64_t e = 0; e < dim; ++e) {
      const float xf = static_cast<float>(x[v * dim + e]), wf = static_cast<float>(w[e]);
      y[v * dim + e] = kernel == Kernel::eager ? round_float_to(round_float_to(xf * r, t) * wf, t)
                                               : round_float_to(xf * r * wf, t);
    }
  }
  return y;
}

std::vector<double> simulate_bwd(Kernel kernel, const std::vector<double>& x, const std::vector<double>& w,
                                 const std::vector<double>& dy, std::int64_t vectors, std::int64_t dim, ElemType t) {
  std::vector<double> dx(x.size());
  const std::int64_t summed = kernel == Kernel::tail_dropped ? dim / 8 * 8 : dim;
  for (std::int64_t v = 0; v < vectors; ++v) {
    const auto at = [&](std::int64_t e) { return static_cast<std::size_t>(v * dim + e); };
    float sum_sq = 0, dot = 0;
    for (std::int64_t e = 0; e < dim; ++e) {
      const float xf = static_cast<float>(x[at(e)]);
      sum_sq += xf * xf;
      if (e < summed) dot += static_cast<float>(dy[at(e)]) * static_cast<float>(w[e]) * xf;
    }
    const float r = rsqrt_like_device(sum_sq + static_cast<float>(kQkNormEps), v);
    for (std::int64_t e = 0; e < dim; ++e) {
      const float xf = static_cast<float>(x[at(e)]), g = static_cast<float>(dy[at(e)]) * static_cast<float>(w[e]);
      float value;
      if (kernel == Kernel::eager) {
        const float gss = dot * -0.5f * r * r * r;
        value = g * r + gss * (xf * 2.0f);
      } else {
        value = r * g - xf * (r * r * r * dot);
      }
      dx[at(e)] = round_float_to(value, t);
    }
  }
  return dx;
}

std::vector<Shape> shapes() {
  std::vector<Shape> out;
  for (std::int64_t d : {1, 7, 33, 64, 100, 128, 257}) out.push_back(qk_shape(24, 4, 2, d));
  out.push_back(qk_shape(64, 32, 8, 128));
  return out;
}

TEST(QkNormErrorBound, ForwardKernelsStayInsideTheRelativeBound) {
  const Op& op = registered_op("qk_norm_fwd");
  std::uint64_t seed = 300;
  for (const Shape& s : shapes())
    for (DType dtype : {DType::fp32, DType::fp16, DType::bf16}) {
      const auto in = device_inputs(op, s, dtype, ++seed);
      const auto expected = run_oracle(op, s, in);
      const auto specs = op.tensors(s, dtype);
      const std::int64_t dim = s.at("head_dim"), vectors = s.at("tokens") * s.at("heads");
      for (Kernel k : {Kernel::fused, Kernel::eager}) {
        const auto y = simulate_fwd(k, in[0].values, in[2].values, vectors, dim, elem_type_of(dtype));
        const auto c = check_simulated("q_out", elem_type_of(dtype), *specs[4].tolerance, y, expected[0]);
        // A hard bound (no random sums): 1.25x the worst case of each rounding keeps it <= 0.8.
        EXPECT_LT(c.worst_bound_fraction, 0.85) << s.to_compact() << " " << to_string(dtype);
      }
    }
}

TEST(QkNormErrorBound, ForwardNormWithoutTheHeadVectorsTailFailsWhereTheFlatTableMissedIt) {
  const Op& op = registered_op("qk_norm_fwd");
  const Shape s = qk_shape(64, 32, 8, 100);
  std::uint64_t seed = 400;
  for (DType dtype : {DType::fp32, DType::fp16, DType::bf16}) {
    const auto in = device_inputs(op, s, dtype, ++seed);
    const auto expected = run_oracle(op, s, in);
    const auto specs = op.tensors(s, dtype);
    const auto y = simulate_fwd(Kernel::tail_dropped, in[0].values, in[2].values, 64 * 32, 100, elem_type_of(dtype));
    const auto c = check_simulated("q_out", elem_type_of(dtype), *specs[4].tolerance, y, expected[0]);
    EXPECT_GT(c.mismatches, c.elements_checked / 2) << to_string(dtype);
    if (dtype == DType::bf16) {  // the table's flat tolerance it replaces: 8e-3 + 1.6e-2 |y|
      const auto flat = check_simulated("q_out", ElemType::bf16,
                                        reduction_tolerance(ElemType::bf16, 100, ElemType::fp32, 0.0), y, expected[0]);
      EXPECT_LT(flat.mismatches, c.elements_checked / 50) << "the flat tolerance let nearly all of it pass";
    }
  }
}

TEST(QkNormErrorBound, BackwardKernelsStayInsideTheBoundAndTheDroppedTailFails) {
  const Op& op = registered_op("qk_norm_bwd");
  std::uint64_t seed = 500;
  for (const Shape& s : shapes())
    for (DType dtype : {DType::fp32, DType::fp16, DType::bf16}) {
      const std::int64_t dim = s.at("head_dim"), vectors = s.at("tokens") * s.at("heads");
      const auto in = device_inputs(op, s, dtype, ++seed);
      const auto expected = run_oracle(op, s, in);
      ASSERT_EQ(expected[0].abs_sum.size(), expected[0].values.size());
      const auto specs = op.tensors(s, dtype);
      const std::string where = s.to_compact() + " " + std::string(to_string(dtype));
      for (Kernel k : {Kernel::fused, Kernel::eager}) {
        const auto dx = simulate_bwd(k, in[0].values, in[2].values, in[4].values, vectors, dim, elem_type_of(dtype));
        const auto c = check_simulated("dq", elem_type_of(dtype), *specs[6].tolerance, dx, expected[0]);
        EXPECT_LT(c.worst_bound_fraction, 0.85) << where;
      }
      if (dim % 8 == 0 || dim < 8) continue;  // no tail to drop
      const auto bad = simulate_bwd(Kernel::tail_dropped, in[0].values, in[2].values, in[4].values, vectors, dim,
                                    elem_type_of(dtype));
      const auto c = check_simulated("dq", elem_type_of(dtype), *specs[6].tolerance, bad, expected[0]);
      EXPECT_GT(c.mismatches, 0) << where;
    }
}

TEST(QkNormErrorBound, TolerancesAreTightWhereTheFlatOnesWereLoose) {
  const auto fwd = registered_op("qk_norm_fwd").tensors(qk_shape(16384, 32, 8, 128), DType::bf16);
  EXPECT_LT(fwd[4].tolerance->atol, 1e-30) << "relative only: y = x r w cannot cancel";
  EXPECT_LT(fwd[4].tolerance->rtol, 0.011) << "two bf16 roundings and fp32 steps: ~1%";
  const auto bwd = registered_op("qk_norm_bwd").tensors(qk_shape(16384, 32, 8, 128), DType::bf16);
  EXPECT_GT(bwd[6].tolerance->abs_sum_scale, 0);
  EXPECT_LT(bwd[6].tolerance->abs_sum_scale, 1e-4);
  EXPECT_DOUBLE_EQ(bwd[6].tolerance->rtol, 1.25 / 256);
}

}  // namespace
}  // namespace qk_norm_error_bound_test
}  // namespace kwb
