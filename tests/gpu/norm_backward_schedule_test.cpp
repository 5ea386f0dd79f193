// layernorm_bwd's two row schedules on a GPU (kernels/common/norm_backward.cuh): fused_v4 hands
// each CTA a fixed set of rows, so every run gives the same bits; fused_v5 hands rows out from
// an atomic counter, so dx keeps its bits (a row's arithmetic does not depend on who computes it)
// while dweight and dbias are fp32 sums of the same terms in another order. The test measures
// how far apart two fused_v5 runs land (printed) and holds it to a few fp32 ulps of the sums.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/registry.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/op_tensors.hpp"

namespace kwb {
namespace {

// One variant's launches on one set of inputs: x, weight, dy drawn once (seeded), outputs copied
// back after each launch as raw bytes.
class LayerNormBackwardRuns {
 public:
  explicit LayerNormBackwardRuns(std::int64_t rows, std::int64_t cols)
      : tensors_("layernorm_bwd", Shape{{{"rows", rows}, {"cols", cols}}}, DType::bf16) {}

  // Every output's bytes after `launches` launches of `variant` (the last one's answer: each
  // launch writes every output element).
  std::vector<std::vector<unsigned char>> outputs(const char* variant_name, int launches) {
    const Variant* variant = Registry::instance().find_variant("layernorm_bwd", variant_name);
    EXPECT_NE(variant, nullptr) << variant_name;
    if (!variant) return {};
    void* workspace = nullptr;
    cuda_check(cudaMalloc(&workspace, variant->workspace_bytes(tensors_.shape(), DType::bf16)), "workspace");
    const TunableValues tunables = default_tunables(*variant, tensors_.shape(), DType::bf16);
    LaunchArgs args = tensors_.args(workspace, tunables);
    const std::shared_ptr<void> state = variant->prepare ? variant->prepare(args) : nullptr;
    args.state = state.get();
    for (int k = 0; k < launches; ++k) variant->launch(args);
    auto out = tensors_.outputs();
    cudaFree(workspace);
    return out;
  }

 private:
  test::OpTensors tensors_;
};

// The largest |a - b| over two fp32 arrays (given as bytes), relative to b's root mean square: a
// column whose total nearly cancels would make a per-element ratio meaningless.
double max_diff_over_rms_fp32(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b) {
  double worst = 0, squares = 0;
  const std::size_t n = a.size() / 4;
  for (std::size_t i = 0; i < n; ++i) {
    float x, y;
    std::memcpy(&x, &a[4 * i], 4);
    std::memcpy(&y, &b[4 * i], 4);
    worst = std::max(worst, std::abs(double(x) - y));
    squares += double(y) * y;
  }
  return n == 0 ? 0 : worst / std::sqrt(squares / static_cast<double>(n) + 1e-300);
}

// Outputs of layernorm_bwd in order: dx (bf16), dweight, dbias (fp32). 4096 x 16384 gives each
// of the 132 CTAs of an H100 31 or 32 rows of one 512-thread group: where the schedules differ.
constexpr std::int64_t kRows = 4096, kCols = 16384;

TEST(NormBackwardSchedule, StaticRowsGiveTheSameBitsInEveryRun) {
  KWB_REQUIRE_GPU();
  LayerNormBackwardRuns runs(kRows, kCols);
  const auto first = runs.outputs("fused_v4_cp_async_row_groups", 1);
  const auto later = runs.outputs("fused_v4_cp_async_row_groups", 5);
  ASSERT_EQ(first.size(), 3u);
  for (std::size_t i = 0; i < first.size(); ++i) EXPECT_EQ(first[i], later[i]) << "output " << i;
}

TEST(NormBackwardSchedule, DynamicRowsKeepDxAndMoveOnlyTheLastBitsOfTheColumnSums) {
  KWB_REQUIRE_GPU();
  LayerNormBackwardRuns runs(kRows, kCols);
  const auto reference = runs.outputs("fused_v4_cp_async_row_groups", 1);
  const auto first = runs.outputs("fused_v5_cp_async_dynamic_rows", 1);
  ASSERT_EQ(first.size(), 3u);
  double worst[2] = {0, 0};
  int differing_runs = 0;  // runs whose dweight or dbias bits differ from the first run's
  for (int run = 0; run < 8; ++run) {
    const auto dynamic = run == 0 ? first : runs.outputs("fused_v5_cp_async_dynamic_rows", 1 + run % 3);
    ASSERT_EQ(dynamic.size(), 3u);
    EXPECT_EQ(dynamic[0], reference[0]) << "dx must not depend on which group computed a row";
    for (int k = 0; k < 2; ++k) worst[k] = std::max(worst[k], max_diff_over_rms_fp32(dynamic[1 + k], reference[1 + k]));
    differing_runs += dynamic[1] != first[1] || dynamic[2] != first[2];
  }
  std::printf("fused_v5 at %lldx%lld bf16, 8 runs: %d with other column-sum bits than the first; largest difference "
              "from fused_v4 over the column sums' RMS: dweight %.3g, dbias %.3g\n",
              static_cast<long long>(kRows), static_cast<long long>(kCols), differing_runs, worst[0], worst[1]);
  // Sums of 4096 fp32 terms regrouped: rounding of the partial sums, each a few ulps (2^-24 = 6e-8)
  // of a magnitude near the column's; far below bf16's 2^-8 and the op's tolerance.
  EXPECT_LT(worst[0], 1e-5);
  EXPECT_LT(worst[1], 1e-5);
}

}  // namespace
}  // namespace kwb
