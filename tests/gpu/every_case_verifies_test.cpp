// Every registered (non-test) variant of every op verifies against its oracle at small shapes,
// in every dtype, odd sizes included; and verification really fails a kernel that writes zeros.
#include <gtest/gtest.h>

#include "harness/plan/planner.hpp"
#include "harness/worker/case_runner.hpp"
#include "harness/catalogue/cuda_check.hpp"
#include "harness/worker/measure/device_info.hpp"
#include "harness/catalogue/registry.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace kwb {
namespace {

// The op's edge shapes (1, primes, vector-width misfits, powers of two), as `--shapes edge` runs.
std::vector<Shape> small_shapes(const Op& op) { return named_shape_set(op, ShapeSet::edge); }

CaseRunner& runner() {
  static int device = (cudaSetDevice(0), 0);
  (void)device;
  static CaseRunner r(TimerKind::events, std::size_t{64} << 20);
  return r;
}

TEST(EveryCase, VerifiesAtSmallShapesInEveryDtype) {
  KWB_REQUIRE_GPU();
  int checked = 0;
  for (const auto& op : Registry::instance().ops())
    for (const Variant* v : Registry::instance().variants(op.name, false))
      for (DType dtype : op.dtypes)
        for (const Shape& shape : small_shapes(op)) {
          CaseRequest req;
          req.op = op.name;
          req.variant = v->name;
          req.dtype = dtype;
          req.shape = shape;
          req.mode = Mode::hot;
          req.preset = std::string(kVerifyOnlyPreset);  // checked, not timed
          req.seed = 1234 + checked;
          const CaseRecord rec = runner().run(req);
          if (rec.disposition == Disposition::skipped) continue;  // a stated refusal
          ++checked;
          EXPECT_EQ(rec.disposition, Disposition::passed)
              << rec.nvtx_range << ": " << rec.reason;
          ASSERT_TRUE(rec.verify.has_value()) << rec.nvtx_range;
          EXPECT_EQ(rec.verify->rows_checked, rec.verify->rows_total) << rec.nvtx_range << ": edge shapes verify every row";
          EXPECT_GT(rec.verify->elements_checked, 0);
          EXPECT_FALSE(rec.timing.has_value()) << "--preset verify times nothing";
        }
  EXPECT_GT(checked, 100);
}

TEST(EveryCase, LargeShapeIsVerifiedOnASampleOfRowsAndSaysSo) {
  KWB_REQUIRE_GPU();
  CaseRequest req{0, "rmsnorm_fwd", "fused_v2_vec16", DType::bf16,
                  Shape{{{"rows", 16384}, {"cols", 4096}}}, Mode::hot, "quick", 5, false};
  const CaseRecord rec = runner().run(req);
  ASSERT_EQ(rec.disposition, Disposition::passed) << rec.reason;
  EXPECT_LT(rec.verify->rows_checked, rec.verify->rows_total);
  EXPECT_EQ(rec.verify->rows_total, 16384);
}

TEST(EveryCase, OutputOfZerosFailsVerificationAndIsNotTimed) {
  KWB_REQUIRE_GPU();
  CaseRequest req{0, "rmsnorm_fwd", "test_wrong_all_zeros", DType::bf16,
                  Shape{{{"rows", 64}, {"cols", 1024}}}, Mode::hot, "quick", 9, true};
  const CaseRecord rec = runner().run(req);
  EXPECT_EQ(rec.disposition, Disposition::failed);
  ASSERT_TRUE(rec.verify.has_value());
  EXPECT_TRUE(rec.verify->all_zero);
  EXPECT_FALSE(rec.verify->first_mismatches.empty());
  EXPECT_FALSE(rec.timing.has_value());
}

}  // namespace
}  // namespace kwb
