// docs/adding-an-op.md's worked example on the host: the oracle against values worked out by
// hand and on a sample of rows, and the registration (a hidden op, its tensors by name, a
// baseline and a fused variant, the work model). Its GPU run: tests/gpu/example_scale_rows_cols_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "reference/testing/example_scale_rows_cols.hpp"
#include "tests/support/oracle_support.hpp"

namespace kwb {
namespace example_scale_rows_cols_test {
namespace {

using example_scale_rows_cols::kOp;

Shape shape(std::int64_t rows, std::int64_t cols) { return Shape{{{"rows", rows}, {"cols", cols}}}; }

TEST(ExampleScaleRowsColsOracle, MatchesHandValues) {
  // y[r, c] = x[r, c] * scale[r] * weight[c]; every product is exact in fp64.
  const auto y = run_oracle(registered_op(kOp), shape(2, 3),
                            {{"x", {2, 3}, {1, 2, 3, 4, 5, 6}},
                             {"scale", {2}, {2, -0.5}},
                             {"weight", {3}, {1, 10, 0.25}}});
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].values, (std::vector<double>{2, 40, 1.5, -2, -25, -0.75}));
}

// The verifier checks a large case on a sample of rows: it calls the oracle on a shape of just
// those rows, with the slabs of the tensors that run along rows (x, scale) and weight whole.
// The answer must be those rows of the full answer, or sample_dim is declared wrong.
TEST(ExampleScaleRowsColsOracle, OnSampledRowsEqualsThoseRowsOfTheFullAnswer) {
  const Op& op = registered_op(kOp);
  const auto in = host_inputs(op.tensors(shape(6, 4), DType::fp32), 3);  // x, scale, weight
  const auto full = run_oracle(op, shape(6, 4), in);
  const std::vector<std::int64_t> rows = {2, 5};
  HostTensor x{"x", {2, 4}, {}}, scale{"scale", {2}, {}};
  std::vector<double> expected;
  for (std::int64_t r : rows) {
    for (std::int64_t c = 0; c < 4; ++c) {
      x.values.push_back(in[0].values[r * 4 + c]);
      expected.push_back(full[0].values[r * 4 + c]);
    }
    scale.values.push_back(in[1].values[r]);
  }
  EXPECT_EQ(run_oracle(op, shape(2, 4), {x, scale, in[2]})[0].values, expected);
}

TEST(ExampleScaleRowsColsRegistration, IsAHiddenOpWhoseTensorsAreFoundByName) {
  const Op& op = registered_op(kOp);
  EXPECT_TRUE(op.test_only) << "hidden from `kwb list` and default sweeps";
  EXPECT_EQ(op.sample_axis, "rows");
  const auto specs = op.tensors(shape(8, 16), DType::bf16);
  auto spec = [&](const std::string& name) {
    const auto it = std::find_if(specs.begin(), specs.end(), [&](const TensorSpec& t) { return t.name == name; });
    if (it == specs.end()) throw std::runtime_error("no tensor " + name);
    return *it;
  };
  EXPECT_EQ(spec("x").dims, (std::vector<std::int64_t>{8, 16}));
  EXPECT_EQ(spec("scale").dims, (std::vector<std::int64_t>{8}));
  EXPECT_EQ(spec("weight").dims, (std::vector<std::int64_t>{16}));
  EXPECT_EQ(spec("y").dims, (std::vector<std::int64_t>{8, 16}));
  EXPECT_TRUE(spec("y").is_output);
  EXPECT_FALSE(spec("x").is_output || spec("scale").is_output || spec("weight").is_output);
  // x, scale and y run along the sample axis; weight belongs to every row.
  EXPECT_EQ(spec("x").sample_dim, 0);
  EXPECT_EQ(spec("scale").sample_dim, 0);
  EXPECT_EQ(spec("weight").sample_dim, -1);
  EXPECT_EQ(spec("y").sample_dim, 0);
}

TEST(ExampleScaleRowsColsRegistration, HasAHiddenBaselineAndFusedVariant) {
  const Registry& registry = Registry::instance();
  EXPECT_TRUE(registry.variants(kOp, false).empty()) << "the variants of a test-only op are hidden too";
  const Variant* baseline = registry.find_variant(kOp, "baseline_eager_2_muls");
  const Variant* fused = registry.find_variant(kOp, "fused_v1_row_per_block_scalar");
  ASSERT_NE(baseline, nullptr);
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(registry.variants(kOp, true).size(), 2u);
  EXPECT_EQ(baseline->role, Role::baseline);
  EXPECT_EQ(fused->role, Role::fused);
  // The baseline's intermediate t lives in the workspace, in the storage dtype; fused needs none.
  ASSERT_TRUE(baseline->workspace_bytes);
  EXPECT_EQ(baseline->workspace_bytes(shape(8, 16), DType::bf16), 8u * 16 * 2);
  EXPECT_EQ(baseline->workspace_bytes(shape(8, 16), DType::fp32), 8u * 16 * 4);
  EXPECT_FALSE(fused->workspace_bytes);
}

TEST(ExampleScaleRowsColsRegistration, WorkModelCountsEachTensorOnceAndTwoMultipliesPerElement) {
  const auto work = registered_op(kOp).work(shape(8, 16), DType::bf16);
  EXPECT_EQ(work.bytes, (2 * 8 * 16 + 8 + 16) * 2);  // x and y, scale, weight: 2 bytes each
  EXPECT_EQ(work.flops, 2 * 8 * 16);
}

}  // namespace
}  // namespace example_scale_rows_cols_test
}  // namespace kwb
