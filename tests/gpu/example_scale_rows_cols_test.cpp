// docs/adding-an-op.md's worked example on the GPU: both variants pass verification at every
// edge and default shape of the op, in every dtype. EveryCase (every_case_verifies_test.cpp)
// does this for every ordinary op; it leaves test-only ops out, so the example has its own.
#include <gtest/gtest.h>

#include <vector>

#include "harness/catalogue/registry.hpp"
#include "harness/record/stats.hpp"
#include "harness/worker/case_runner.hpp"
#include "reference/testing/example_scale_rows_cols.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace kwb {
namespace {

using example_scale_rows_cols::kOp;

CaseRunner& runner() {
  static int device = (cudaSetDevice(0), 0);
  (void)device;
  static CaseRunner r(TimerKind::events, std::size_t{64} << 20);
  return r;
}

TEST(ExampleScaleRowsCols, EveryVariantVerifiesAtItsEdgeAndDefaultShapesInEveryDtype) {
  KWB_REQUIRE_GPU();
  const Op* op = Registry::instance().find_op(kOp);
  ASSERT_NE(op, nullptr);
  std::vector<Shape> shapes = op->edge_shapes;
  shapes.insert(shapes.end(), op->default_shapes.begin(), op->default_shapes.end());
  const auto variants = Registry::instance().variants(kOp, true);
  ASSERT_EQ(variants.size(), 2u);
  int passed = 0;
  for (const Variant* v : variants)
    for (DType dtype : op->dtypes)
      for (const Shape& shape : shapes) {
        CaseRequest req;
        req.op = kOp;
        req.variant = v->name;
        req.dtype = dtype;
        req.shape = shape;
        req.mode = Mode::hot;
        req.preset = std::string(kVerifyOnlyPreset);  // checked, not timed
        req.seed = 500 + passed;
        req.include_test_variants = true;
        const CaseRecord rec = runner().run(req);
        ASSERT_EQ(rec.disposition, Disposition::passed) << rec.nvtx_range << ": " << rec.reason;
        ASSERT_TRUE(rec.verify.has_value()) << rec.nvtx_range;
        EXPECT_GT(rec.verify->elements_checked, 0) << rec.nvtx_range;
        ++passed;
      }
  EXPECT_EQ(passed, static_cast<int>(variants.size() * op->dtypes.size() * shapes.size()));
}

}  // namespace
}  // namespace kwb
