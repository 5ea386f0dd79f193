// The norm weight gradients' shared fp64 formulas (reference/norm_weight_grad_fp64.hpp), which the
// GPU kernels of rmsnorm_bwd's, layernorm_bwd's and qk_norm_bwd's device oracles run, taken through
// the table those oracles read (reference/norm_grad_sources.hpp), against the ops' host oracles
// (the ground truth): the same values and bound magnitudes from the same inputs, in the same
// outputs, at small shapes of each op. And the sample plan such an op gets: its dx rows sampled at
// a large shape where a device may serve the oracles, everything verified in full where none may.
// tests/gpu/norm_weight_grad_device_oracle_test.cpp runs the kernels themselves.
#include "reference/norm_weight_grad_fp64.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "reference/layernorm.hpp"
#include "reference/norm_grad_sources.hpp"
#include "reference/qk_norm.hpp"
#include "reference/rmsnorm.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace norm_weight_grad_fp64_test {
namespace {

// |a - b| within 1e-12 of `scale` (the sum of the terms' magnitudes: the two sum in other orders).
void expect_close(const std::vector<double>& got, const std::vector<double>& want,
                  const std::vector<double>& scale, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_LE(std::abs(got[i] - want[i]), 1e-12 * std::max(1.0, scale[i]))
        << what << "[" << i << "]: " << got[i] << " vs " << want[i];
}

Shape rows_cols(std::int64_t rows, std::int64_t cols) {
  return Shape{{{"rows", rows}, {"cols", cols}}};
}
Shape qk(std::int64_t tokens, std::int64_t heads, std::int64_t kv_heads, std::int64_t head_dim) {
  return Shape{
      {{"tokens", tokens}, {"heads", heads}, {"kv_heads", kv_heads}, {"head_dim", head_dim}}};
}

// Through the table the device oracles read (reference/norm_grad_sources.hpp): its tensors, row
// counts, statistics and eps, and the outputs it fills, with the host twin of the kernels' sums in
// place of the GPU. What it fills must be the host oracle's answer for those outputs.
void expect_sources_give_the_host_oracles_answer(const char* name, const Shape& shape,
                                                 const std::vector<ref::NormGradSource>& sources,
                                                 std::uint64_t seed) {
  SCOPED_TRACE(std::string(name) + " " + shape.to_assignments());
  const Op& op = registered_op(name);
  const auto specs = op.tensors(shape, DType::fp32);
  const auto in = host_inputs(specs, seed);  // the inputs, in spec order (they come first)
  const auto want = run_oracle(op, shape, in);
  auto got = empty_outputs(specs);
  for (const ref::NormGradSource& s : sources) {
    ASSERT_FALSE(specs.at(s.x).is_output);
    ASSERT_FALSE(specs.at(s.dy).is_output);
    ref::NormWeightGrads g = ref::norm_weight_grads_fp64_host(
        in.at(s.x).values.data(), in.at(s.dy).values.data(), s.rows, s.cols, s.kind, s.eps);
    const std::vector<double> scale =
        g.dweight_abs;  // the terms' magnitudes: the two sum in other orders
    ref::take_norm_grads(s, g, got);
    const HostTensor& w = want.at(s.dweight);
    expect_close(got[s.dweight].values, w.values, scale, "dweight");
    EXPECT_EQ(got[s.dweight].abs_sum.size(), w.abs_sum.size())
        << "dweight's A: kept where the host oracle keeps it";
    if (!w.abs_sum.empty())
      expect_close(got[s.dweight].abs_sum, w.abs_sum, w.abs_sum, "dweight abs_sum");
    EXPECT_EQ(got[s.dweight].root_sum_sq.size(), w.root_sum_sq.size());
    if (!w.root_sum_sq.empty())
      expect_close(got[s.dweight].root_sum_sq, w.root_sum_sq, w.root_sum_sq, "dweight R");
    if (s.dbias) {
      const HostTensor& b = want.at(*s.dbias);
      expect_close(got[*s.dbias].values, b.values, b.abs_sum, "dbias");
      expect_close(got[*s.dbias].abs_sum, b.abs_sum, b.abs_sum, "dbias abs_sum");
    }
  }
  // Every row-summed output (sample_dim -1) is filled by some source, and nothing else is.
  std::size_t out = 0;
  for (const TensorSpec& t : specs) {
    if (!t.is_output) continue;
    const bool filled = !std::isnan(got[out++].values.at(0));
    EXPECT_EQ(filled, t.sample_dim < 0) << t.name;
  }
}

TEST(NormWeightGradFp64, TheDeviceOraclesSourcesGiveTheHostOraclesAnswers) {
  for (const Shape& s :
       {rows_cols(1, 1), rows_cols(7, 33), rows_cols(300, 17), rows_cols(64, 1000)}) {
    expect_sources_give_the_host_oracles_answer("rmsnorm_bwd", s, ref::rmsnorm_bwd_grad_sources(s),
                                                3);
    expect_sources_give_the_host_oracles_answer("layernorm_bwd", s,
                                                ref::layernorm_bwd_grad_sources(s), 5);
  }
  for (const Shape& s : {qk(7, 3, 1, 33), qk(33, 4, 2, 128), qk(1, 1, 1, 1)})
    expect_sources_give_the_host_oracles_answer("qk_norm_bwd", s, ref::qk_norm_bwd_grad_sources(s),
                                                9);
}

// A wrong statistic is seen: the RMS of a row taken over its sum instead of its mean (qk_norm's
// form given to rmsnorm_bwd) moves dweight by far more than the tolerance above.
TEST(NormWeightGradFp64, TheWrongRowStatisticIsSeen) {
  const Op& op = registered_op("rmsnorm_bwd");
  const Shape shape = rows_cols(16, 64);
  const auto in = host_inputs(op.tensors(shape, DType::fp32), 4);
  const auto out = run_oracle(op, shape, in);
  const auto wrong = ref::norm_weight_grads_fp64_host(in[0].values.data(), in[2].values.data(), 16,
                                                      64, ref::NormStats::rms_sum, kRmsNormEps);
  double worst = 0;
  for (std::size_t c = 0; c < wrong.dweight.size(); ++c)
    worst = std::max(
        worst, std::abs(wrong.dweight[c] - out[1].values[c]) / std::max(1.0, out[1].abs_sum[c]));
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
    EXPECT_NE(on_device.note.find(std::string(c.unaligned) + " (not aligned with"),
              std::string::npos)
        << on_device.note;
    const SamplePlan on_host = plan_sample(op, c.shape, specs, 7, /*device_oracle_usable=*/false);
    EXPECT_FALSE(on_host.sampled);
    EXPECT_NE(on_host.note.find("full: output"), std::string::npos) << on_host.note;
  }
}

}  // namespace
}  // namespace norm_weight_grad_fp64_test
}  // namespace kwb
