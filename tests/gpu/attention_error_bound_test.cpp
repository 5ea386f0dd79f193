// attention_fwd's error bounds on the device: the planted 1% logit-scale defect
// (kernels/testing/attention_logit_scale_off.cu) fails verification at every default shape of
// the op, in bf16 and fp16, causal and not, and the failure names lse (and o in fp16); the real
// kernel it wraps (fused_v1) passes the same cases, with its worst element well inside its bound.
#include <gtest/gtest.h>

#include <string>

#include "harness/catalogue/registry.hpp"
#include "harness/worker/case_runner.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/in_process_case.hpp"

namespace kwb {
namespace {

CaseRecord verify_case(const std::string& variant, DType dtype, const Shape& shape, std::uint64_t seed) {
  return test::run_in_process("attention_fwd", variant, dtype, shape, std::string(kVerifyOnlyPreset), seed);
}

const OutputCheck& output(const CaseRecord& rec, const std::string& name) { return test::output_named(rec, name); }

TEST(AttentionErrorBound, LogitScaleOnePercentOffFailsAtEveryDefaultShapeWhileFusedV1Passes) {
  KWB_REQUIRE_GPU();
  const Op* op = Registry::instance().find_op("attention_fwd");
  ASSERT_NE(op, nullptr);
  std::uint64_t seed = 900;
  for (const Shape& shape : op->default_shapes)
    for (DType dtype : {DType::bf16, DType::fp16}) {
      ++seed;
      const CaseRecord bad = verify_case("test_attention_logit_scale_1pct_off", dtype, shape, seed);
      const std::string where = bad.nvtx_range;
      ASSERT_TRUE(bad.verify.has_value()) << where << ": " << bad.reason;
      EXPECT_EQ(bad.disposition, Disposition::failed) << where;
      EXPECT_NE(bad.reason.find("lse:"), std::string::npos) << where << ": " << bad.reason;
      const auto& lse = output(bad, "lse");
      EXPECT_GT(lse.mismatches, lse.elements_checked / 2) << where;
      if (dtype == DType::fp16) EXPECT_GT(output(bad, "o").mismatches, 0) << where;
      std::printf("%s: o worst %.3g of its bound (%lld mismatches), lse worst %.3g (%lld mismatches)\n",
                  where.c_str(), output(bad, "o").worst_bound_fraction,
                  static_cast<long long>(output(bad, "o").mismatches), lse.worst_bound_fraction,
                  static_cast<long long>(lse.mismatches));

      const CaseRecord good = verify_case("fused_v1_fa2_mma_m16n8k16_cp_async_swizzled", dtype, shape, seed);
      ASSERT_EQ(good.disposition, Disposition::passed) << good.nvtx_range << ": " << good.reason;
      EXPECT_LT(output(good, "o").worst_bound_fraction, 0.6) << good.nvtx_range;
      EXPECT_LT(output(good, "lse").worst_bound_fraction, 0.2) << good.nvtx_range;
      std::printf("%s: o worst %.3g, lse worst %.3g of their bounds\n", good.nvtx_range.c_str(),
                  output(good, "o").worst_bound_fraction, output(good, "lse").worst_bound_fraction);
    }
}

}  // namespace
}  // namespace kwb
