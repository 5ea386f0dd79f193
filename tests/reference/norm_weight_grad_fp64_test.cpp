// The norm weight gradients' shared fp64 formulas (reference/norm_weight_grad_fp64.hpp), which the
// GPU kernels of rmsnorm_bwd's, layernorm_bwd's and qk_norm_bwd's device oracles run, against
// those ops' host oracles (the ground truth): the same values and bound magnitudes from the same
// inputs, at small shapes of each op. And the sample plan such an op gets: its dx rows sampled at
// a large shape where a device may serve the oracles, everything verified in full where none may.
// tests/gpu/norm_weight_grad_device_oracle_test.cpp runs the kernels themselves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "reference/layernorm.hpp"
#include "reference/norm_weight_grad_fp64.hpp"
#include "reference/qk_norm.hpp"
#include "reference/rmsnorm.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace norm_weight_grad_fp64_test {
namespace {

// |a - b| within 1e-12 of `scale` (the sum of the terms' magnitudes: the two sum in other orders).
void expect_close(const std::vector<double>& got, const std::vector<double>& want, const std::vector<double>& scale,
                  const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_LE(std::abs(got[i] - want[i]), 1e-12 * std::max(1.0, scale[i]))
        << what << "[" << i << "]: " << got[i] << " vs " << want[i];
}

Shape rows_cols(std::int64_t rows, std::int64_t cols) { return Shape{{{"rows", rows}, {"cols", cols}}}; }

TEST(NormWeightGradFp64, RmsNormDweightAndItsMagnitudesEqualTheHostOracles) {
  const Op& op = registered_op("rmsnorm_bwd");
  for (const Shape& shape : {rows_cols(1, 1), rows_cols(7, 33), rows_cols(300, 17), rows_cols(64, 1000)}) {
    SCOPED_TRACE(shape.to_assignments());
    const auto in = host_inputs(op.tensors(shape, DType::fp32), 3);  // x, weight, dy
    const auto out = run_oracle(op, shape, in);                     // dx, dweight
    const auto g = ref::norm_weight_grads_fp64_host(in[0].values.data(), in[2].values.data(), shape.at("rows"),
                                                    shape.at("cols"), ref::NormStats::rms_mean, kRmsNormEps);
    expect_close(g.dweight, out[1].values, out[1].abs_sum, "dweight");
    expect_close(g.dweight_abs, out[1].abs_sum, out[1].abs_sum, "dweight abs_sum");
    expect_close(g.dweight_rss, out[1].root_sum_sq, out[1].root_sum_sq, "dweight root_sum_sq");
  }
}

TEST(NormWeightGradFp64, LayerNormDweightDbiasAndTheirMagnitudesEqualTheHostOracles) {
  const Op& op = registered_op("layernorm_bwd");
  for (const Shape& shape : {rows_cols(1, 1), rows_cols(5, 2), rows_cols(300, 17), rows_cols(64, 1000)}) {
    SCOPED_TRACE(shape.to_assignments());
    const auto in = host_inputs(op.tensors(shape, DType::fp32), 5);  // x (mean 0.5), weight, dy
    const auto out = run_oracle(op, shape, in);                     // dx, dweight, dbias
    const auto g = ref::norm_weight_grads_fp64_host(in[0].values.data(), in[2].values.data(), shape.at("rows"),
                                                    shape.at("cols"), ref::NormStats::centred, kLayerNormEps);
    expect_close(g.dweight, out[1].values, out[1].abs_sum, "dweight");
    expect_close(g.dweight_abs, out[1].abs_sum, out[1].abs_sum, "dweight abs_sum");
    expect_close(g.dweight_rss, out[1].root_sum_sq, out[1].root_sum_sq, "dweight root_sum_sq");
    expect_close(g.dbias, out[2].values, out[2].abs_sum, "dbias");
    expect_close(g.dbias_abs, out[2].abs_sum, out[2].abs_sum, "dbias abs_sum");
  }
}

TEST(NormWeightGradFp64, QkNormWeightGradientsEqualTheHostOracles) {
  const Op& op = registered_op("qk_norm_bwd");
  const auto qk = [](std::int64_t tokens, std::int64_t heads, std::int64_t kv_heads, std::int64_t head_dim) {
    return Shape{{{"tokens", tokens}, {"heads", heads}, {"kv_heads", kv_heads}, {"head_dim", head_dim}}};
  };
  for (const Shape& shape : {qk(7, 3, 1, 33), qk(33, 4, 2, 128), qk(1, 1, 1, 1)}) {
    SCOPED_TRACE(shape.to_assignments());
    // q, k, q_weight, k_weight, dq_out, dk_out -> dq, dk, dq_weight, dk_weight
    const auto in = host_inputs(op.tensors(shape, DType::fp32), 9);
    const auto out = run_oracle(op, shape, in);
    const std::int64_t tokens = shape.at("tokens"), head_dim = shape.at("head_dim");
    const auto q = ref::norm_weight_grads_fp64_host(in[0].values.data(), in[4].values.data(),
                                                    tokens * shape.at("heads"), head_dim, ref::NormStats::rms_sum,
                                                    kQkNormEps);
    const auto k = ref::norm_weight_grads_fp64_host(in[1].values.data(), in[5].values.data(),
                                                    tokens * shape.at("kv_heads"), head_dim, ref::NormStats::rms_sum,
                                                    kQkNormEps);
    // The terms |dy xhat| sum to the weight gradients' A, which the host oracle does not keep.
    expect_close(q.dweight, out[2].values, q.dweight_abs, "dq_weight");
    expect_close(k.dweight, out[3].values, k.dweight_abs, "dk_weight");
  }
}

// A wrong statistic is seen: the RMS of a row taken over its sum instead of its mean (qk_norm's
// form given to rmsnorm_bwd) moves dweight by far more than the tolerance above.
TEST(NormWeightGradFp64, TheWrongRowStatisticIsSeen) {
  const Op& op = registered_op("rmsnorm_bwd");
  const Shape shape = rows_cols(16, 64);
  const auto in = host_inputs(op.tensors(shape, DType::fp32), 4);
  const auto out = run_oracle(op, shape, in);
  const auto wrong = ref::norm_weight_grads_fp64_host(in[0].values.data(), in[2].values.data(), 16, 64,
                                                      ref::NormStats::rms_sum, kRmsNormEps);
  double worst = 0;
  for (std::size_t c = 0; c < wrong.dweight.size(); ++c)
    worst = std::max(worst, std::abs(wrong.dweight[c] - out[1].values[c]) / std::max(1.0, out[1].abs_sum[c]));
  EXPECT_GT(worst, 1e-3);
}

// Where a device may serve the oracles, a large case samples its aligned outputs and takes the
// row-summed ones from the device oracle; where none may, it is verified in full.
TEST(NormWeightGradFp64, ALargeCaseSamplesItsRowsOnlyWhereTheDeviceMayServeTheWeightGradients) {
  struct Case {
    const char* op;
    Shape shape;
    const char* unaligned;
  };
  const Case cases[] = {
      {"rmsnorm_bwd", rows_cols(16384, 4096), "'dweight'"},
      {"layernorm_bwd", rows_cols(16384, 4096), "'dweight', 'dbias'"},
      {"qk_norm_bwd", Shape{{{"tokens", 16384}, {"heads", 32}, {"kv_heads", 8}, {"head_dim", 128}}},
       "'dq_weight', 'dk_weight'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    const Op& op = registered_op(c.op);
    const auto specs = op.tensors(c.shape, DType::bf16);
    const SamplePlan on_device = plan_sample(op, c.shape, specs, 7, /*device_oracle_usable=*/true);
    EXPECT_TRUE(on_device.sampled);
    EXPECT_TRUE(on_device.unaligned_on_device);
    EXPECT_NE(on_device.note.find(std::string(c.unaligned) + " (not aligned with"), std::string::npos)
        << on_device.note;
    const SamplePlan on_host = plan_sample(op, c.shape, specs, 7, /*device_oracle_usable=*/false);
    EXPECT_FALSE(on_host.sampled);
    EXPECT_NE(on_host.note.find("full: output"), std::string::npos) << on_host.note;
  }
}

}  // namespace
}  // namespace norm_weight_grad_fp64_test
}  // namespace kwb
