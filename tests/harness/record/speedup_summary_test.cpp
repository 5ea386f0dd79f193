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

}  // namespace
}  // namespace kwb
