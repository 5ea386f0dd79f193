// The mean-pooling oracles on the host: hand values (an empty sequence pools to 0), the backward
// against finite differences of the forward, the work model's kept fraction, and the error bounds:
// simulations of the baseline's and the fused kernel's roundings pass in every dtype, planted
// defects (the padding counted, a dropped token read) fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/tolerance.hpp"
#include "reference/mean_pooling.hpp"
#include "tests/reference/simulated_output_check.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace {

Shape shape(std::int64_t batch, std::int64_t seq, std::int64_t hidden) {
  return Shape{{{"batch", batch}, {"seq", seq}, {"hidden", hidden}}};
}

HostTensor pooling_tensor(const char* name, std::vector<std::int64_t> dims, std::vector<double> values) {
  return {name, std::move(dims), std::move(values)};
}

TEST(MeanPoolingOracle, ForwardAveragesTheKeptTokensAndAnEmptySequencePoolsToZero) {
  // Sequence 0 keeps tokens 0 and 2 of 3; sequence 1 keeps none.
  const std::vector<HostTensor> in{pooling_tensor("x", {2, 3, 2}, {1, 2, 100, 200, 3, 6, 7, 7, 7, 7, 7, 7}),
                                   pooling_tensor("mask", {2, 3}, {1, 0, 1, 0, 0, 0})};
  const auto out = run_oracle(registered_op("mean_pooling_fwd"), shape(2, 3, 2), in);
  ASSERT_EQ(out[0].values.size(), 4u);
  EXPECT_DOUBLE_EQ(out[0].values[0], 2.0);  // (1 + 3) / 2
  EXPECT_DOUBLE_EQ(out[0].values[1], 4.0);  // (2 + 6) / 2
  EXPECT_DOUBLE_EQ(out[0].values[2], 0.0);
  EXPECT_DOUBLE_EQ(out[0].values[3], 0.0);
  EXPECT_DOUBLE_EQ(out[0].abs_sum[0], 2.0);  // (|1| + |3|) / 2: the A of the bound
}

// The oracles work in blocks of 256 columns and chunks of rows over the host's cores: at a width
// of several blocks with a partial last one they must give, bit for bit, what a plain loop over
// the tokens in order gives.
TEST(MeanPoolingOracle, BlocksOfColumnsAndRowsGiveThePlainLoopsAnswerBitForBit) {
  const PoolingAxes a{3, 5, 600};  // blocks of 256, 256 and 88 columns
  const Op& fwd = registered_op("mean_pooling_fwd");
  const Shape s = shape(a.batch, a.seq, a.hidden);
  auto in = host_inputs(fwd.tensors(s, DType::fp32), 21);
  for (int t = 0; t < 5; ++t) in[1].values[5 + t] = 0;  // an empty sequence
  std::vector<double> y(a.batch * a.hidden), y_abs(a.batch * a.hidden), dx(a.batch * a.seq * a.hidden);
  mean_pool_forward(a, in[0].values.data(), in[1].values.data(), y.data(), y_abs.data());
  mean_pool_backward(a, y.data(), in[1].values.data(), dx.data());
  for (std::int64_t b = 0; b < a.batch; ++b) {
    double n = 0;
    for (std::int64_t t = 0; t < a.seq; ++t) n += in[1].values[b * a.seq + t];
    const double inv = 1.0 / std::max(n, 1.0);
    for (std::int64_t c = 0; c < a.hidden; ++c) {
      double sum = 0, abs_sum = 0;
      for (std::int64_t t = 0; t < a.seq; ++t)
        if (in[1].values[b * a.seq + t] != 0) {
          sum += in[0].values[(b * a.seq + t) * a.hidden + c];
          abs_sum += std::fabs(in[0].values[(b * a.seq + t) * a.hidden + c]);
        }
      ASSERT_EQ(y[b * a.hidden + c], sum * inv) << "batch " << b << " column " << c;
      ASSERT_EQ(y_abs[b * a.hidden + c], abs_sum * inv) << "batch " << b << " column " << c;
      for (std::int64_t t = 0; t < a.seq; ++t)
        ASSERT_EQ(dx[(b * a.seq + t) * a.hidden + c],
                  in[1].values[b * a.seq + t] != 0 ? y[b * a.hidden + c] * inv : 0.0);
    }
  }
}

TEST(MeanPoolingOracle, BackwardEqualsFiniteDifferencesOfTheForward) {
  const Op& fwd = registered_op("mean_pooling_fwd");
  const Op& bwd = registered_op("mean_pooling_bwd");
  const Shape s = shape(3, 5, 4);
  auto fwd_in = host_inputs(fwd.tensors(s, DType::fp32), 11);  // x, mask
  auto bwd_in = host_inputs(bwd.tensors(s, DType::fp32), 12);  // dy, mask
  bwd_in[1] = fwd_in[1];                                        // the same mask
  // An empty sequence among them: its gradient must be 0 as well.
  for (int t = 0; t < 5; ++t) fwd_in[1].values[5 + t] = bwd_in[1].values[5 + t] = 0;
  const auto grads = run_oracle(bwd, s, bwd_in);
  for (std::int64_t e = 0; e < 3 * 5 * 4; ++e) {
    const double fd = finite_difference_vjp(fwd, s, fwd_in, 0, e, {bwd_in[0]});
    EXPECT_NEAR(grads[0].values[static_cast<std::size_t>(e)], fd, 1e-8 * (1 + std::abs(fd))) << "element " << e;
  }
}

// The backward samples positions of the sequence (a batch of four long sequences has too few
// batch rows to sample): its oracle on the sampled positions gives those rows of the whole
// answer, with the counts of the whole mask.
TEST(MeanPoolingOracle, TheBackwardSampledAlongTheSequenceGivesThoseRowsOfTheWholeAnswer) {
  const Op& bwd = registered_op("mean_pooling_bwd");
  const Shape s = shape(4, 32768, 136);  // over 2^24 elements: sampled
  const auto specs = bwd.tensors(s, DType::bf16);
  const SamplePlan plan = plan_sample(bwd, s, specs, 5);
  ASSERT_TRUE(plan.sampled) << plan.note;
  EXPECT_EQ(plan.axis, "seq");
  const auto in = host_inputs(specs, 13);  // dy, mask: both whole
  EXPECT_EQ(plan.dims(specs[1]), (std::vector<std::int64_t>{4, 32768})) << "the mask is read whole";
  const auto whole = run_oracle(bwd, s, in);
  std::vector<HostTensor> sampled{{"dx", plan.dims(specs[2]), std::vector<double>(plan.elements(specs[2]), NAN)}};
  run_sampled_oracle(bwd, s, plan, in, sampled);
  const auto n = static_cast<std::int64_t>(plan.indices.size());
  std::int64_t kept = 0;
  for (std::int64_t b = 0; b < 4; ++b)
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t c = 0; c < 136; ++c) {
        const std::int64_t t = plan.indices[static_cast<std::size_t>(i)];
        const double want = whole[0].values[static_cast<std::size_t>((b * 32768 + t) * 136 + c)];
        ASSERT_EQ(sampled[0].values[static_cast<std::size_t>((b * n + i) * 136 + c)], want) << b << " " << t << " " << c;
        kept += want != 0;
      }
  EXPECT_GT(kept, 0);
}

TEST(MeanPoolingOracle, TheForwardCountsXAtTheKeptFractionAndTheBackwardEveryTensorOnce) {
  const Shape s = shape(16, 4096, 4096);
  const double x = 16.0 * 4096 * 4096 * 2, mask = 16.0 * 4096, y = 16.0 * 4096 * 2;
  EXPECT_DOUBLE_EQ(registered_op("mean_pooling_fwd").work(s, DType::bf16).bytes, 0.75 * x + mask + y);
  EXPECT_DOUBLE_EQ(registered_op("mean_pooling_bwd").work(s, DType::bf16).bytes, x + mask + y);
  // The generated mask keeps the fraction the model assumes.
  const auto in = host_inputs(registered_op("mean_pooling_fwd").tensors(shape(64, 1024, 1), DType::bf16), 3);
  double kept = 0;
  for (double m : in[1].values) kept += m;
  EXPECT_NEAR(kept / in[1].values.size(), kPoolingKeptFraction, 0.01);
}

// The case's inputs rounded to `dtype`, as the device holds them.
std::vector<HostTensor> rounded_inputs(const Op& op, const Shape& s, DType dtype, std::uint64_t seed) {
  auto in = host_inputs(op.tensors(s, dtype), seed);
  for (double& v : in[0].values) v = round_to_dtype(v, dtype);
  return in;
}

// The forward as a kernel computes it, in float: `baseline` rounds the sum and the count to the
// dtype before the quotient (three roundings); else one. `count_padding` divides by seq (a planted
// defect); `read_dropped` adds the dropped tokens too (another).
std::vector<double> simulate_forward(const PoolingAxes& p, const std::vector<HostTensor>& in, ElemType out,
                                     bool baseline, bool count_padding = false, bool read_dropped = false) {
  const auto& x = in[0].values;
  const auto& mask = in[1].values;
  std::vector<double> y(static_cast<std::size_t>(p.batch * p.hidden));
  for (std::int64_t b = 0; b < p.batch; ++b) {
    float n = 0;
    for (std::int64_t s = 0; s < p.seq; ++s) n += static_cast<float>(mask[b * p.seq + s]);
    if (count_padding) n = static_cast<float>(p.seq);
    for (std::int64_t c = 0; c < p.hidden; ++c) {
      float sum = 0;
      for (std::int64_t s = 0; s < p.seq; ++s)
        if (mask[b * p.seq + s] != 0 || read_dropped) sum += static_cast<float>(x[(b * p.seq + s) * p.hidden + c]);
      float value;
      if (baseline)
        value = round_float_to(round_float_to(sum, out) / round_float_to(std::fmax(n, 1.0f), out), out);
      else
        value = sum * (1.0f / std::fmax(n, 1.0f));
      y[static_cast<std::size_t>(b * p.hidden + c)] = value;
    }
  }
  return y;
}

TEST(MeanPoolingBound, TheBaselineAndTheFusedKernelPassInEveryDtypeAndDefectsFail) {
  const Op& op = registered_op("mean_pooling_fwd");
  // 3000 tokens: the count passes 256, where bf16 stops holding integers exactly.
  const Shape s = shape(6, 3000, 96);
  const PoolingAxes p = PoolingAxes::of(s);
  for (DType dtype : {DType::fp32, DType::fp16, DType::bf16}) {
    const ElemType out = elem_type_of(dtype);
    const auto in = rounded_inputs(op, s, dtype, 5);
    const auto expected = run_oracle(op, s, in);
    const Tolerance tol = *op.tensors(s, dtype)[2].tolerance;
    for (bool baseline : {true, false}) {
      const auto check = check_simulated("y", out, tol, simulate_forward(p, in, out, baseline), expected[0]);
      EXPECT_TRUE(check.passed) << to_string(dtype) << (baseline ? " baseline" : " fused") << ": "
                                << check.mismatches << " elements, worst at " << check.worst_bound_fraction
                                << " of the bound";
    }
    const auto padded = check_simulated("y", out, tol, simulate_forward(p, in, out, false, true), expected[0]);
    EXPECT_GT(padded.mismatches, p.batch * p.hidden / 2) << to_string(dtype) << ": dividing by seq";
    const auto dropped = check_simulated("y", out, tol, simulate_forward(p, in, out, false, false, true), expected[0]);
    EXPECT_GT(dropped.mismatches, p.batch * p.hidden / 2) << to_string(dtype) << ": adding dropped tokens";
  }
}

TEST(MeanPoolingBound, TheBackwardsRoundingsPassAndAMissingMaskFails) {
  const Op& op = registered_op("mean_pooling_bwd");
  const Shape s = shape(4, 3000, 64);
  const PoolingAxes p = PoolingAxes::of(s);
  for (DType dtype : {DType::fp32, DType::fp16, DType::bf16}) {
    const ElemType out = elem_type_of(dtype);
    auto in = host_inputs(op.tensors(s, dtype), 9);
    for (double& v : in[0].values) v = round_to_dtype(v, dtype);
    const auto expected = run_oracle(op, s, in);
    const Tolerance tol = *op.tensors(s, dtype)[2].tolerance;
    std::vector<double> baseline(expected[0].values.size()), unmasked(expected[0].values.size());
    for (std::int64_t b = 0; b < p.batch; ++b) {
      float n = 0;
      for (std::int64_t t = 0; t < p.seq; ++t) n += static_cast<float>(in[1].values[b * p.seq + t]);
      const float count = round_float_to(std::fmax(n, 1.0f), out);
      for (std::int64_t t = 0; t < p.seq; ++t)
        for (std::int64_t c = 0; c < p.hidden; ++c) {
          const float g = round_float_to(static_cast<float>(in[0].values[b * p.hidden + c]) / count, out);
          const auto e = static_cast<std::size_t>((b * p.seq + t) * p.hidden + c);
          baseline[e] = in[1].values[b * p.seq + t] != 0 ? g : 0.0f;
          unmasked[e] = g;
        }
    }
    const auto check = check_simulated("dx", out, tol, baseline, expected[0]);
    EXPECT_TRUE(check.passed) << to_string(dtype) << ": " << check.mismatches << " elements, worst at "
                              << check.worst_bound_fraction;
    EXPECT_GT(check_simulated("dx", out, tol, unmasked, expected[0]).mismatches, p.batch * p.seq * p.hidden / 8)
        << to_string(dtype) << ": the gradient spread to dropped tokens";
  }
}

}  // namespace
}  // namespace kwb
