// On the GPU: the error-bound tolerances of the row ops catch a planted defect the old flat
// tolerance let through (rmsnorm_fwd test_fault_flush_small_outputs: y = 0 where |x| < 2^-8),
// and the degenerate rows that the flat tolerances failed (layernorm_bwd and rmsnorm_bwd at
// cols = 1, 5000 rows, fp32) pass for every real variant.
#include <gtest/gtest.h>

#include <string>

#include "harness/catalogue/registry.hpp"
#include "harness/record/stats.hpp"
#include "harness/worker/case_runner.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/in_process_case.hpp"

namespace kwb {
namespace {

CaseRecord run_case(const std::string& op, const std::string& variant, DType dtype, const Shape& shape) {
  return test::run_in_process(op, variant, dtype, shape, std::string(kVerifyOnlyPreset), 77);
}

TEST(NormBoundFaults, OutputsFlushedToZeroNearZeroFailNamingY) {
  KWB_REQUIRE_GPU();
  for (DType dtype : {DType::bf16, DType::fp16, DType::fp32}) {
    const CaseRecord rec = run_case("rmsnorm_fwd", "test_fault_flush_small_outputs", dtype,
                                    Shape{{{"rows", 1024}, {"cols", 1000}}});
    EXPECT_EQ(rec.disposition, Disposition::failed) << to_string(dtype) << ": " << rec.reason;
    EXPECT_NE(rec.reason.find("y:"), std::string::npos) << rec.reason;
    EXPECT_NE(rec.reason.find("sum|term|"), std::string::npos)
        << "the reason names the error bound: " << rec.reason;
  }
}

TEST(NormBoundFaults, EveryRealNormBackwardVariantPassesAtColsOneAndTwo) {
  KWB_REQUIRE_GPU();
  for (const char* op : {"layernorm_bwd", "rmsnorm_bwd"})
    for (const Variant* v : Registry::instance().variants(op, false))
      for (DType dtype : {DType::fp32, DType::bf16, DType::fp16})
        for (const Shape& shape :
             {Shape{{{"rows", 5000}, {"cols", 1}}}, Shape{{{"rows", 300}, {"cols", 2}}}}) {
          const CaseRecord rec = run_case(op, v->name, dtype, shape);
          if (rec.disposition == Disposition::skipped)
            continue;  // a variant that refuses the shape says why
          EXPECT_EQ(rec.disposition, Disposition::passed)
              << op << " " << v->name << " " << to_string(dtype) << " " << shape.to_compact()
              << ": " << rec.reason;
          ASSERT_TRUE(rec.verify.has_value());
          EXPECT_LT(rec.verify->worst_bound_fraction, 0.6)
              << op << " " << v->name << " " << shape.to_compact();
        }
}

}  // namespace
}  // namespace kwb
