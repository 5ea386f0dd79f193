// The next group's oracle prepared on a background thread while the current group runs
// (harness/worker/prepare/group_prefetch.hpp), through the case runner on a real GPU: the
// group it was prepared for reads it and verifies exactly as if it had computed it itself; an
// oracle that uses the GPU, the events timer and a hint the session does not follow leave each
// group to prepare itself.
#include <gtest/gtest.h>
#include <cuda_runtime_api.h>

#include "harness/worker/case_runner.hpp"
#include "reference/matmul_fp64_gpu.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/support/oracle_gpu.hpp"

namespace kwb {
namespace {

// A verify-only case (never timed, so a runner of the CUPTI kind needs no tracer here).
CaseRequest verify_case(const std::string& op, const std::string& variant, Shape shape, int index) {
  CaseRequest r;
  r.index = index;
  r.op = op;
  r.variant = variant;
  r.dtype = DType::bf16;
  r.shape = std::move(shape);
  if (const Variant* v = Registry::instance().find_variant(op, variant))
    r.tunables = default_tunables(*v, r.shape, r.dtype);
  r.mode = Mode::hot;
  r.preset = std::string(kVerifyOnlyPreset);
  r.seed = 29;
  return r;
}

CaseRequest norm_case(std::int64_t rows, std::int64_t cols, int index) {
  return verify_case("rmsnorm_fwd", "fused_v2_vec16", Shape{{{"rows", rows}, {"cols", cols}}}, index);
}

double background_ms(const CaseRecord& r) { return r.stages ? r.stages->oracle_background_ms : -1; }

void expect_same_verification(const CaseRecord& a, const CaseRecord& b) {
  ASSERT_TRUE(a.verify && b.verify);
  EXPECT_TRUE(a.verify->passed && b.verify->passed) << a.reason << " / " << b.reason;
  EXPECT_EQ(a.verify->elements_checked, b.verify->elements_checked);
  EXPECT_EQ(a.verify->max_abs_err, b.verify->max_abs_err);
  EXPECT_EQ(a.verify->max_rel_err, b.verify->max_rel_err);
  EXPECT_EQ(a.verify->rel_l2_err, b.verify->rel_l2_err);
  ASSERT_EQ(a.verify->outputs.size(), b.verify->outputs.size());
  for (std::size_t i = 0; i < a.verify->outputs.size(); ++i)
    EXPECT_EQ(a.verify->outputs[i].worst_bound_fraction, b.verify->outputs[i].worst_bound_fraction);
}

class GroupPrefetchGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    KWB_REQUIRE_GPU();
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  }
  const test::ScopedOracleGpuDevice oracle_device_{0};  // as the worker's thread
};

TEST_F(GroupPrefetchGpu, TheNextGroupReadsTheBackgroundAnswerAndVerifiesAsIfItHadComputedIt) {
  const CaseRequest first = norm_case(4096, 4096, 0), next = norm_case(65536, 1024, 1);
  CaseRunner hinted(TimerKind::cupti, std::size_t{50} << 20);
  hinted.expect_next_group(next);
  const CaseRecord a = hinted.run(first);
  const CaseRecord b = hinted.run(next);
  EXPECT_EQ(a.disposition, Disposition::passed) << a.reason;
  EXPECT_EQ(background_ms(a), 0.0) << "the first group had no one to prepare it";
  EXPECT_GT(background_ms(b), 0.0) << "the second group's oracle came from the background";

  CaseRunner alone(TimerKind::cupti, std::size_t{50} << 20);
  const CaseRecord b_alone = alone.run(next);
  EXPECT_EQ(background_ms(b_alone), 0.0);
  expect_same_verification(b, b_alone);
  // A later case of the prepared group shares its answer.
  CaseRequest sibling = next;
  sibling.variant = "fused_v3_vec16_any_cols";
  sibling.tunables = default_tunables(*Registry::instance().find_variant("rmsnorm_fwd", sibling.variant),
                                      sibling.shape, sibling.dtype);
  const CaseRecord c = hinted.run(sibling);
  EXPECT_EQ(c.disposition, Disposition::passed) << c.reason;
}

// Beside other GPUs the session names the next group only as the current group's last case
// starts: the worker prepares it then, though its current group is long prepared.
TEST_F(GroupPrefetchGpu, AHintAtAGroupsLastCaseIsFollowedToo) {
  const CaseRequest first = norm_case(4096, 4096, 0), next = norm_case(65536, 1024, 2);
  CaseRequest last_of_first = first;
  last_of_first.index = 1;
  last_of_first.variant = "fused_v3_vec16_any_cols";
  last_of_first.tunables = default_tunables(*Registry::instance().find_variant("rmsnorm_fwd", last_of_first.variant),
                                            last_of_first.shape, last_of_first.dtype);
  CaseRunner runner(TimerKind::cupti, std::size_t{50} << 20);
  EXPECT_EQ(runner.run(first).disposition, Disposition::passed);
  runner.expect_next_group(next);
  EXPECT_EQ(runner.run(last_of_first).disposition, Disposition::passed);
  const CaseRecord b = runner.run(next);
  EXPECT_EQ(b.disposition, Disposition::passed) << b.reason;
  EXPECT_GT(background_ms(b), 0.0) << "prepared during the first group's last case";
}

TEST_F(GroupPrefetchGpu, AnOracleWhoseProductsGoToTheGpuIsComputedInItsTurn) {
  const test::ScopedOracleGpuSwitch on("1");
  // 512 sampled rows x 4096 x 4096: far above the products sent to the GPU.
  const CaseRequest first = norm_case(4096, 4096, 0);
  const CaseRequest gemm = verify_case("linear_bias_relu", "baseline_cublas_then_bias_relu",
                                       Shape{{{"m", 8192}, {"n", 4096}, {"k", 4096}}}, 1);
  CaseRunner hinted(TimerKind::cupti, std::size_t{50} << 20);
  hinted.expect_next_group(gemm);
  hinted.run(first);
  const std::int64_t products_before = ref::matmul_fp64_gpu_runs();
  const CaseRecord g = hinted.run(gemm);
  EXPECT_EQ(g.disposition, Disposition::passed) << g.reason;
  EXPECT_EQ(background_ms(g), 0.0) << "handed back by the background thread";
  EXPECT_GT(ref::matmul_fp64_gpu_runs(), products_before) << "and made on the GPU by the worker's thread";
  CaseRunner alone(TimerKind::cupti, std::size_t{50} << 20);
  expect_same_verification(g, alone.run(gemm));
}

TEST_F(GroupPrefetchGpu, UnderTheEventsTimerNothingIsPreparedAhead) {
  const CaseRequest first = norm_case(4096, 4096, 0), next = norm_case(65536, 1024, 1);
  CaseRunner events(TimerKind::events, std::size_t{50} << 20);
  events.expect_next_group(next);
  events.run(first);
  const CaseRecord b = events.run(next);
  EXPECT_EQ(b.disposition, Disposition::passed) << b.reason;
  EXPECT_EQ(background_ms(b), 0.0);
}

TEST_F(GroupPrefetchGpu, APreparedGroupWaitsThroughAnotherGroupUntilTheNextHintReplacesIt) {
  const CaseRequest first = norm_case(4096, 4096, 0), hinted_group = norm_case(65536, 1024, 1),
                    other = norm_case(2048, 8192, 2);
  CaseRunner runner(TimerKind::cupti, std::size_t{50} << 20);
  runner.expect_next_group(hinted_group);
  runner.run(first);
  // Another group comes first (the current group prepared again after a CUDA error is such a
  // case): it prepares itself, and the answer made for the hinted group waits for it.
  const CaseRecord o = runner.run(other);
  EXPECT_EQ(o.disposition, Disposition::passed) << o.reason;
  EXPECT_EQ(background_ms(o), 0.0);
  const CaseRecord h = runner.run(hinted_group);
  EXPECT_EQ(h.disposition, Disposition::passed) << h.reason;
  EXPECT_GT(background_ms(h), 0.0) << "the answer prepared for it was kept while another group ran";

  // The next hint replaces an answer no group took.
  runner.expect_next_group(other);
  runner.run(first);
  runner.expect_next_group(hinted_group);
  runner.run(first);
  const CaseRecord o2 = runner.run(other);
  EXPECT_EQ(o2.disposition, Disposition::passed) << o2.reason;
  EXPECT_EQ(background_ms(o2), 0.0) << "the answer prepared for it was replaced by the next hint";
  const CaseRecord h2 = runner.run(hinted_group);
  EXPECT_GT(background_ms(h2), 0.0);
}

}  // namespace
}  // namespace kwb
