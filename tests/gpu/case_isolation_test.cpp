// What is timed is what was verified, and one case cannot change the next: through the real `kwb
// run`, the test-only variants that cheat the timer (a trivial kernel, no launch, half the rows
// after their first launch) fail under CUPTI and under CUDA events with a reason that says the
// timed launches did not reproduce the verified output; the variant that leaves a persisting L2
// set-aside and an access policy window behind fails with "changed device state" naming both;
// the case after it times as in a fresh process; and the real RMSNorm variants still pass, their
// timed output bit-identical to the verified one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "harness/record/json_report.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace kwb {
namespace {

// Runs `kwb run ARGS` into a fresh folder and reads its report.
Report run_kwb(const std::string& args, int expected_exit) {
  const test::TempDir dir;
  const auto out = dir.path();
  const auto result =
      test::run_command(std::string(KWB_CLI_PATH) + " run " + args + " --datasheet-ceilings --out " + out.string());
  EXPECT_EQ(result.exit_code, expected_exit) << result.output;
  return read_report_json(out / "report.json");
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const CaseRecord* find_case(const Report& report, const std::string& variant, std::int64_t cols) {
  for (const CaseRecord& c : report.cases)
    if (c.variant == variant && c.shape.at("cols") == cols) return &c;
  return nullptr;
}

// Under `timer`: the four planted variants fail with the reason that names what they did, and two
// real ones pass.
void expect_cheats_fail_and_real_variants_pass(const std::string& timer) {
  // 1. Two real variants beside the four planted ones, at a shape that is verified on a sample of
  // rows (4096 x 4096 bf16: 16M elements): the timed check covers every element regardless.
  const Report report = run_kwb("--op rmsnorm_fwd --variant fused_v1_row_per_block,fused_v2_vec16,"
                                "test_timed_trivial_kernel,test_timed_no_launch,test_timed_half_rows,"
                                "test_state_persisting_l2 --include-test-variants --dtype bf16 --axis rows=4096 "
                                "--axis cols=4096 --preset quick --timer " + timer,
                                1);
  ASSERT_EQ(report.cases.size(), 6u);
  const std::int64_t elements = 4096 * 4096;

  // 2. Each planted variant fails with the reason that names what it did.
  std::map<std::string, const CaseRecord*> by_variant;
  for (const CaseRecord& c : report.cases) by_variant[c.variant] = &c;
  for (const std::string v : {"test_timed_trivial_kernel", "test_timed_no_launch", "test_timed_half_rows"}) {
    SCOPED_TRACE(v + " under " + timer);
    const CaseRecord& c = *by_variant.at(v);
    EXPECT_EQ(c.disposition, Disposition::failed);
    EXPECT_TRUE(c.verify && c.verify->passed) << "its first launch is correct: verification passes";
    EXPECT_FALSE(c.timing.has_value()) << "a case whose timed launches are not the verified one keeps no time";
    EXPECT_TRUE(contains(c.reason, "timed launches did not reproduce the verified output")) << c.reason;
    const std::int64_t wrong = v == "test_timed_half_rows" ? elements / 2 : elements;
    EXPECT_TRUE(contains(c.reason, std::to_string(wrong) + " of " + std::to_string(elements) + " elements differ"))
        << c.reason;
    EXPECT_TRUE(contains(c.reason, "never written (still poison)")) << c.reason;
  }
  {
    SCOPED_TRACE("test_state_persisting_l2 under " + timer);
    const CaseRecord& c = *by_variant.at("test_state_persisting_l2");
    EXPECT_EQ(c.disposition, Disposition::failed);
    EXPECT_TRUE(contains(c.reason, "changed device state: ")) << c.reason;
    EXPECT_TRUE(contains(c.reason, "persisting L2 limit (cudaLimitPersistingL2CacheSize)")) << c.reason;
    EXPECT_TRUE(contains(c.reason, "stream access policy window (cudaStreamAttributeAccessPolicyWindow): none -> "))
        << c.reason;
  }

  // 3. The real variants pass, their timed output compared bit for bit with the verified one.
  for (const std::string v : {"fused_v1_row_per_block", "fused_v2_vec16"}) {
    SCOPED_TRACE(v + " under " + timer);
    const CaseRecord& c = *by_variant.at(v);
    EXPECT_EQ(c.disposition, Disposition::passed) << c.reason;
    ASSERT_TRUE(c.timing.has_value());
    EXPECT_TRUE(contains(c.timing->output_check, "bit-identical to the verified output")) << c.timing->output_check;
  }
}

TEST(TimedLaunchCheats, FailUnderCuptiWithTheReasonAndTheRealVariantsPass) {
  KWB_REQUIRE_GPU();
  expect_cheats_fail_and_real_variants_pass("cupti");
}

TEST(TimedLaunchCheats, FailUnderCudaEventsWithTheReasonAndTheRealVariantsPass) {
  KWB_REQUIRE_GPU();
  expect_cheats_fail_and_real_variants_pass("events");
}

// The case after the state-changing variant, in the same worker, against the same case in fresh
// processes before and after it: the median span must sit within 2% of the two clean medians'
// mean (it read 1.9x before the state was put back).
TEST(DeviceStateIsolation, TheCaseAfterAStateChangingVariantTimesAsInAFreshProcess) {
  KWB_REQUIRE_GPU();
  const std::string clean_args = "--op rmsnorm_fwd --variant fused_v2_vec16 --dtype bf16 --axis rows=4096 "
                                 "--axis cols=4096 --preset default";
  const Report clean_before = run_kwb(clean_args, 0);
  // Shapes run in the order given, so fused_v2_vec16 at 4096 x 4096 comes after the leaking
  // variant's case at 4096 x 1024 whatever the order of the variants within a shape.
  const Report after_leak = run_kwb("--op rmsnorm_fwd --variant fused_v2_vec16,test_state_persisting_l2 "
                                    "--include-test-variants --dtype bf16 --axis rows=4096 --axis cols=1024,4096 "
                                    "--preset default",
                                    1);
  const Report clean_after = run_kwb(clean_args, 0);

  const CaseRecord* polluted = find_case(after_leak, "fused_v2_vec16", 4096);
  const CaseRecord* leak = find_case(after_leak, "test_state_persisting_l2", 1024);
  ASSERT_TRUE(polluted && leak);
  ASSERT_LT(leak->index, polluted->index) << "the plan must run the leaking variant first";
  EXPECT_EQ(leak->disposition, Disposition::failed);
  EXPECT_TRUE(contains(leak->reason, "changed device state: ")) << leak->reason;
  ASSERT_EQ(clean_before.cases.size(), 1u);
  ASSERT_EQ(clean_after.cases.size(), 1u);
  for (const CaseRecord* c : {polluted, &clean_before.cases[0], &clean_after.cases[0]}) {
    ASSERT_EQ(c->disposition, Disposition::passed) << c->reason;
    ASSERT_TRUE(c->timing.has_value());
  }
  const double clean = (clean_before.cases[0].timing->span.median + clean_after.cases[0].timing->span.median) / 2;
  const double ratio = polluted->timing->span.median / clean;
  std::printf("fused_v2_vec16 bf16 4096x4096: %.3f us after the leaking variant; clean %.3f and %.3f us; "
              "ratio %.4f\n",
              polluted->timing->span.median, clean_before.cases[0].timing->span.median,
              clean_after.cases[0].timing->span.median, ratio);
  EXPECT_NEAR(ratio, 1.0, 0.02);
}

// Every real RMSNorm forward variant passes, its timed output bit-identical to the verified one.
TEST(TimedOutputCheck, EveryRealRmsNormVariantReproducesItsVerifiedOutputBitForBit) {
  KWB_REQUIRE_GPU();
  const Report report = run_kwb("--op rmsnorm_fwd --dtype bf16,fp32 --axis rows=1024,4096 --axis cols=4096,4100 "
                                "--preset quick",
                                0);
  ASSERT_GE(report.cases.size(), 8u);
  for (const CaseRecord& c : report.cases) {
    SCOPED_TRACE(c.nvtx_range);
    if (c.disposition == Disposition::skipped) continue;  // a variant refusing a shape, with its reason
    EXPECT_EQ(c.disposition, Disposition::passed) << c.reason;
    ASSERT_TRUE(c.timing.has_value());
    EXPECT_TRUE(contains(c.timing->output_check, "bit-identical to the verified output")) << c.timing->output_check;
  }
}

// Outputs of mixed element sizes and odd counts (rmsnorm_bwd bf16 at one row: dx holds `cols` bf16,
// dweight `cols` fp32): each output's copy starts aligned, so the fp32 comparison never reads
// 2 bytes off (it failed every such case with a launch failure, found under compute-sanitizer).
TEST(TimedOutputCheck, OutputsOfMixedSizesAndOddCountsAreComparedAligned) {
  KWB_REQUIRE_GPU();
  const Report report = run_kwb("--op rmsnorm_bwd --variant baseline_eager_23_launches,fused_v1_persistent_vec16 "
                                "--dtype bf16 --axis rows=1 --axis cols=1,17,33 --preset quick",
                                0);
  ASSERT_EQ(report.cases.size(), 6u);
  for (const CaseRecord& c : report.cases) {
    SCOPED_TRACE(c.nvtx_range);
    EXPECT_EQ(c.disposition, Disposition::passed) << c.reason;
    ASSERT_TRUE(c.timing.has_value());
    EXPECT_TRUE(contains(c.timing->output_check, "bit-identical to the verified output")) << c.timing->output_check;
  }
}

// Variants that vary run to run are re-checked within tolerance, not bit for bit, and pass.
TEST(TimedOutputCheck, AVariantThatVariesRunToRunIsRecheckedAgainstTheOracleAndPasses) {
  KWB_REQUIRE_GPU();
  const Report report = run_kwb("--op rmsnorm_bwd --variant fused_v3_cp_async_dynamic_rows --dtype bf16,fp32 "
                                "--axis rows=4096 --axis cols=4096 --preset quick",
                                0);
  ASSERT_EQ(report.cases.size(), 2u);
  for (const CaseRecord& c : report.cases) {
    SCOPED_TRACE(c.nvtx_range);
    EXPECT_EQ(c.disposition, Disposition::passed) << c.reason;
    ASSERT_TRUE(c.timing.has_value());
    EXPECT_TRUE(contains(c.timing->output_check, "within tolerance (the variant varies run to run)"))
        << c.timing->output_check;
  }
}

}  // namespace
}  // namespace kwb
