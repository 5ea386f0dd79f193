// A real `kwb run` of linear_bias_relu in fp32 and bf16 labels what ran each case: the library
// baseline in full fp32 (fp32) and on the bf16 tensor cores (bf16) with cuBLASLt named, the
// tf32 kernel as tf32, the CUDA-core kernel as fp32 at every dtype, a skipped case with no math;
// and its speedup against the full-fp32 baseline says "tf32 vs fp32", in the report and on the
// console.
#include <gtest/gtest.h>

#include "harness/catalogue/math_label.hpp"
#include "harness/record/json_report.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace kwb {
namespace {

const CaseRecord* find(const Report& r, const std::string& variant, DType dtype) {
  for (const CaseRecord& c : r.cases)
    if (c.variant == variant && c.dtype == dtype) return &c;
  return nullptr;
}

TEST(Labels, ARealRunRecordsUsesAndMathAndNamesTf32AgainstFp32) {
  KWB_REQUIRE_GPU();
  // Prepare: every variant of the op at one small shape, both dtypes.
  const test::TempDir dir;
  const auto run = test::run_command(
      test::shell_quote(KWB_CLI_PATH) +
      " run --op linear_bias_relu --dtype fp32,bf16 --axis m=512 --axis n=512 --axis k=512 --preset quick"
      " --datasheet-ceilings --out " + test::shell_quote(dir.path().string()));
  // Run.
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const Report report = read_report_json(dir.path() / "report.json");
  // Verify: the library baseline at both dtypes.
  const CaseRecord* base32 = find(report, "baseline_cublas_then_bias_relu", DType::fp32);
  const CaseRecord* base16 = find(report, "baseline_cublas_then_bias_relu", DType::bf16);
  ASSERT_TRUE(base32 && base16) << run.output;
  EXPECT_EQ(base32->math, "fp32");
  EXPECT_EQ(base16->math, "bf16, fp32 acc");
  EXPECT_EQ(base32->uses, std::vector<std::string>{"cuBLASLt"});
  // The tf32 kernel: passed, labelled, and its speedup set against the fp32 baseline says so.
  const CaseRecord* tf32 = find(report, "fused_v3_mma_sync_tf32_cp_async", DType::fp32);
  ASSERT_TRUE(tf32) << run.output;
  ASSERT_EQ(tf32->disposition, Disposition::passed) << tf32->reason;
  EXPECT_EQ(tf32->math, "tf32");
  EXPECT_TRUE(tf32->uses.empty());
  ASSERT_TRUE(tf32->derived && tf32->derived->speedup_vs_baseline);
  EXPECT_EQ(tf32->derived->baseline_math, "fp32");
  EXPECT_EQ(math_comparison(tf32->math, tf32->derived->baseline_math), "tf32 vs fp32");
  // The CUDA-core kernel at bf16, and the tf32 kernel's refused bf16 case.
  const CaseRecord* smem16 = find(report, "fused_v2_smem_tiled", DType::bf16);
  ASSERT_TRUE(smem16);
  EXPECT_EQ(smem16->math, "fp32");
  const CaseRecord* refused = find(report, "fused_v3_mma_sync_tf32_cp_async", DType::bf16);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->disposition, Disposition::skipped);
  EXPECT_EQ(refused->math, "");
  // The console: the per-case table and the speedup summary name the math.
  EXPECT_NE(run.output.find("(tf32 vs fp32)"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("cuBLASLt"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace kwb
