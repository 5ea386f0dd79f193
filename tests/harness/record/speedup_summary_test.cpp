// The per-op speedup rows: the fastest passed fused variant against the passed baseline of the
// same op, dtype, shape and mode, with both kernel counts; failed and unmatched cases never count.
#include "harness/record/speedup_summary.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kwb {
namespace {

Shape shape(std::int64_t rows, std::int64_t cols) { return Shape{{{"rows", rows}, {"cols", cols}}}; }

CaseRecord timed(const std::string& variant, Role role, Shape s, double median_us, std::int64_t kernels,
                 Disposition disposition = Disposition::passed, DType dtype = DType::bf16) {
  CaseRecord r;
  r.op = "rmsnorm_bwd";
  r.variant = variant;
  r.role = role;
  r.dtype = dtype;
  r.shape = std::move(s);
  r.disposition = disposition;
  r.workspace_bytes = role == Role::baseline ? 3 << 20 : 4096;
  TimingResult t;
  t.span.median = median_us;
  t.kernels_per_sample = kernels;
  r.timing = t;
  return r;
}

TEST(SpeedupSummary, PicksTheFastestPassedFusedVariantAndCarriesBothKernelCounts) {
  const std::vector<CaseRecord> records = {
      timed("baseline_eager_9_launches", Role::baseline, shape(16384, 4096), 900.0, 9),
      timed("fused_v1", Role::fused, shape(16384, 4096), 120.0, 2),
      timed("fused_v2", Role::fused, shape(16384, 4096), 100.0, 2),
      timed("fused_v3_broken", Role::fused, shape(16384, 4096), 50.0, 1, Disposition::failed),
  };
  const auto rows = speedup_summary(records);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].best_variant, "fused_v2");
  EXPECT_DOUBLE_EQ(rows[0].speedup, 9.0);
  EXPECT_EQ(rows[0].baseline_kernels, 9);
  EXPECT_EQ(rows[0].best_kernels, 2);
  EXPECT_EQ(rows[0].baseline_workspace_bytes, 3 << 20);
  EXPECT_EQ(rows[0].best_workspace_bytes, 4096);
  // Nothing measured: the memory columns fall back on the declared workspaces.
  EXPECT_EQ(rows[0].baseline_memory_bytes, 3 << 20);
  EXPECT_EQ(rows[0].best_memory_bytes, 4096);
}

TEST(SpeedupSummary, MeasuredDeviceMemoryWinsOverTheDeclaredWorkspace) {
  std::vector<CaseRecord> records = {
      timed("baseline_eager_9_launches", Role::baseline, shape(16384, 4096), 900.0, 9),
      timed("fused_v1", Role::fused, shape(16384, 4096), 120.0, 2),
  };
  records[0].device_memory_bytes = 6 << 20;  // a library handle on top of the 3 MiB declared
  records[1].device_memory_bytes = 0;        // the 4 KiB partials fit a page already mapped
  const auto rows = speedup_summary(records);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].baseline_memory_bytes, 6 << 20);
  EXPECT_EQ(rows[0].best_memory_bytes, 0);
  EXPECT_EQ(rows[0].baseline_workspace_bytes, 3 << 20);
}

TEST(SpeedupSummary, NoRowWithoutAPassedBaselineOrFusedVariantOfTheSameShapeAndDtype) {
  const std::vector<CaseRecord> records = {
      timed("baseline_eager_9_launches", Role::baseline, shape(16384, 4096), 900.0, 9, Disposition::failed),
      timed("fused_v1", Role::fused, shape(16384, 4096), 100.0, 2),
      timed("baseline_eager_9_launches", Role::baseline, shape(4096, 4096), 300.0, 9),
      timed("fused_v1", Role::fused, shape(4096, 4100), 30.0, 2),
      timed("fused_v1", Role::fused, shape(4096, 4096), 30.0, 2, Disposition::passed, DType::fp16),
  };
  EXPECT_TRUE(speedup_summary(records).empty());
}

TEST(SpeedupSummary, OneRowPerShapeInTheOrderOfTheBaselines) {
  const std::vector<CaseRecord> records = {
      timed("baseline_eager_9_launches", Role::baseline, shape(2, 8), 10.0, 9),
      timed("baseline_eager_9_launches", Role::baseline, shape(1, 8), 8.0, 9),
      timed("fused_v1", Role::fused, shape(1, 8), 2.0, 2),
      timed("fused_v1", Role::fused, shape(2, 8), 4.0, 2),
  };
  const auto rows = speedup_summary(records);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].shape, shape(2, 8));
  EXPECT_DOUBLE_EQ(rows[0].speedup, 2.5);
  EXPECT_EQ(rows[1].shape, shape(1, 8));
  EXPECT_DOUBLE_EQ(rows[1].speedup, 4.0);
}

CaseRecord with_math(CaseRecord r, std::string math, std::vector<std::string> uses = {}) {
  r.math = std::move(math);
  r.uses = std::move(uses);
  return r;
}

TEST(SpeedupSummary, OtherMathIsNamedAndTheFastestOfTheBaselinesMathFollows) {
  const Shape s = shape(4096, 4096);
  const std::vector<CaseRecord> records = {
      with_math(timed("baseline_cublas", Role::baseline, s, 800.0, 2, Disposition::passed, DType::fp32), "fp32",
                {"cuBLASLt"}),
      with_math(timed("fused_v2_smem_tiled", Role::fused, s, 1000.0, 1, Disposition::passed, DType::fp32), "fp32"),
      with_math(timed("fused_v1_naive", Role::fused, s, 4000.0, 1, Disposition::passed, DType::fp32), "fp32"),
      with_math(timed("fused_v3_tf32", Role::fused, s, 100.0, 1, Disposition::passed, DType::fp32), "tf32"),
  };
  const auto rows = speedup_summary(records);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].best_variant, "fused_v3_tf32");
  EXPECT_EQ(rows[0].math_note, "tf32 vs fp32");
  EXPECT_EQ(rows[0].best_math, "tf32");
  EXPECT_EQ(rows[0].baseline_math, "fp32");
  EXPECT_EQ(rows[0].baseline_uses, std::vector<std::string>{"cuBLASLt"});
  EXPECT_DOUBLE_EQ(rows[0].speedup, 8.0);
  // Like with like: the fastest fp32 variant, slower than the fp32 library GEMM.
  EXPECT_EQ(rows[1].best_variant, "fused_v2_smem_tiled");
  EXPECT_EQ(rows[1].math_note, "");
  EXPECT_DOUBLE_EQ(rows[1].speedup, 0.8);
}

TEST(SpeedupSummary, OneRowWhenTheFastestRunsTheBaselinesMathOrNoneOfItsMathExists) {
  const Shape s = shape(4096, 4096);
  const std::vector<CaseRecord> same = {
      with_math(timed("baseline", Role::baseline, s, 800.0, 2), "bf16, fp32 acc"),
      with_math(timed("fused_fast", Role::fused, s, 100.0, 1), "bf16, fp32 acc"),
      with_math(timed("fused_cuda_cores", Role::fused, s, 900.0, 1), "fp32"),
  };
  auto rows = speedup_summary(same);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].best_variant, "fused_fast");
  EXPECT_EQ(rows[0].math_note, "");
  const std::vector<CaseRecord> other_only = {
      with_math(timed("baseline", Role::baseline, s, 800.0, 2), "fp32"),
      with_math(timed("fused_tf32", Role::fused, s, 100.0, 1), "tf32"),
  };
  rows = speedup_summary(other_only);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].math_note, "tf32 vs fp32");
}

TEST(SpeedupSummary, ReportsWithoutMathLabelsKeepOneRowAndNoNote) {
  const Shape s = shape(4096, 4096);
  const std::vector<CaseRecord> records = {
      timed("baseline", Role::baseline, s, 800.0, 2),
      with_math(timed("fused_tf32", Role::fused, s, 100.0, 1), "tf32"),
      timed("fused_unlabelled", Role::fused, s, 200.0, 1),
  };
  const auto rows = speedup_summary(records);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].best_variant, "fused_tf32");
  EXPECT_EQ(rows[0].math_note, "");  // the baseline's math is unknown: nothing to claim
}

}  // namespace
}  // namespace kwb
