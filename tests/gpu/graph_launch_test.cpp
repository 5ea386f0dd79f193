// `kwb run --launch graph` end to end, through the worker and CUPTI: a multi-launch baseline's
// graph replays lose the host's launch gaps (span no longer than on the stream, every kernel still
// joined to its sample), a long single kernel times the same both ways (within 3%), a launch that
// cannot be captured is skipped with the runtime's reason while the next case runs, and the timed
// output check still catches replays that compute something else than what was verified.
#include <gtest/gtest.h>

#include "harness/record/json_report.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace kwb {
namespace {

struct KwbRun {
  test::CommandResult result;
  Report report;
};

KwbRun run_kwb(const std::string& args, const std::filesystem::path& out) {
  KwbRun r;
  r.result = test::run_command(std::string(KWB_CLI_PATH) + " run " + args + " --datasheet-ceilings --out " + out.string());
  if (std::filesystem::exists(out / "report.json")) r.report = read_report_json(out / "report.json");
  return r;
}

const CaseRecord& only_case(const KwbRun& r) {
  EXPECT_EQ(r.report.cases.size(), 1u) << r.result.output;
  return r.report.cases.at(0);
}

// rmsnorm_fwd's eager baseline: 8 kernels a sample in bf16, each a few microseconds at 1024 rows,
// so a stream sample is mostly the host's launch gaps between them.
constexpr const char* kEagerBaseline =
    "--op rmsnorm_fwd --variant baseline_eager_8_launches --dtype bf16 --axis rows=1024 --axis cols=4096 "
    "--preset quick --timer cupti";

TEST(GraphLaunch, MultiLaunchBaselineReplaysEveryKernelWithoutTheHostsLaunchGaps) {
  KWB_REQUIRE_GPU();
  const test::TempDir dir;
  const KwbRun stream = run_kwb(std::string(kEagerBaseline) + " --launch stream", dir.path() / "stream");
  const KwbRun graph = run_kwb(std::string(kEagerBaseline) + " --launch graph", dir.path() / "graph");
  ASSERT_EQ(stream.result.exit_code, 0) << stream.result.output;
  ASSERT_EQ(graph.result.exit_code, 0) << graph.result.output;
  const CaseRecord& s = only_case(stream);
  const CaseRecord& g = only_case(graph);
  ASSERT_TRUE(s.timing && g.timing) << s.reason << " / " << g.reason;
  EXPECT_EQ(s.timing->launch, LaunchKind::stream);
  EXPECT_EQ(g.timing->launch, LaunchKind::graph);
  EXPECT_EQ(graph.report.run.settings.at("launch"), "graph");
  EXPECT_NE(g.repro.find("--launch graph"), std::string::npos) << g.repro;
  // CUPTI joined every kernel of each replay to its sample, as it does for stream launches.
  EXPECT_EQ(s.timing->kernels_per_sample, 8);
  EXPECT_EQ(g.timing->kernels_per_sample, 8);
  ASSERT_EQ(g.timing->kernels.size(), s.timing->kernels.size());
  // The kernels are the same work; only the gaps between them go. 1% for noise between two runs.
  EXPECT_LE(g.timing->span.median, 1.01 * s.timing->span.median)
      << "graph " << g.timing->span.median << " us, stream " << s.timing->span.median << " us";
  EXPECT_NEAR(g.timing->kernel_sum.median / s.timing->kernel_sum.median, 1.0, 0.10)
      << "the kernels themselves: graph " << g.timing->kernel_sum.median << " us, stream "
      << s.timing->kernel_sum.median << " us";
  // Both records carry the host's launch time per kernel.
  ASSERT_TRUE(s.timing->launch_overhead_us && g.timing->launch_overhead_us);
  EXPECT_GT(*s.timing->launch_overhead_us, 0);
  EXPECT_GT(*g.timing->launch_overhead_us, 0);
  std::printf("eager baseline 1024x4096 bf16: stream %.2f us (%.2f us host per launch), graph %.2f us (%.2f us host "
              "per kernel), graph/stream %.3f\n",
              s.timing->span.median, *s.timing->launch_overhead_us, g.timing->span.median,
              *g.timing->launch_overhead_us, g.timing->span.median / s.timing->span.median);
}

TEST(GraphLaunch, LongSingleKernelTimesTheSameAsAGraphReplayWithinThreePercent) {
  KWB_REQUIRE_GPU();
  const test::TempDir dir;
  // About 4 GiB of traffic, over a millisecond: the launch is nothing beside it.
  const std::string args =
      "--op rmsnorm_fwd --variant fused_v1_row_per_block --dtype fp32 --axis rows=32768 --axis cols=16384 "
      "--mode hot --preset default --timer cupti";
  const KwbRun stream = run_kwb(args + " --launch stream", dir.path() / "stream");
  const KwbRun graph = run_kwb(args + " --launch graph", dir.path() / "graph");
  ASSERT_EQ(stream.result.exit_code, 0) << stream.result.output;
  ASSERT_EQ(graph.result.exit_code, 0) << graph.result.output;
  const CaseRecord& s = only_case(stream);
  const CaseRecord& g = only_case(graph);
  ASSERT_TRUE(s.timing && g.timing);
  EXPECT_GT(s.timing->span.median, 1000.0) << "the kernel should run for over a millisecond";
  EXPECT_EQ(g.timing->kernels_per_sample, 1);
  EXPECT_NEAR(g.timing->span.median / s.timing->span.median, 1.0, 0.03)
      << "graph " << g.timing->span.median << " us, stream " << s.timing->span.median << " us";
}

TEST(GraphLaunch, ALaunchThatCannotBeCapturedIsSkippedWithTheReasonAndTheNextCaseRuns) {
  KWB_REQUIRE_GPU();
  const test::TempDir dir;
  const std::string args =
      "--op rmsnorm_fwd --variant test_graph_host_wait,test_graph_allocates_per_launch,fused_v2_vec16 "
      "--include-test-variants --dtype bf16 --axis rows=1024 --axis cols=4096 --preset quick";
  const KwbRun graph = run_kwb(args + " --launch graph", dir.path() / "graph");
  EXPECT_EQ(graph.result.exit_code, 0) << "skipped cases fail nothing: " << graph.result.output;
  ASSERT_EQ(graph.report.cases.size(), 3u) << graph.result.output;
  for (const CaseRecord& c : graph.report.cases) {
    SCOPED_TRACE(c.variant);
    if (c.variant == "fused_v2_vec16") {  // after two refused captures, on the same worker
      EXPECT_EQ(c.disposition, Disposition::passed) << c.reason;
      ASSERT_TRUE(c.timing.has_value());
      EXPECT_EQ(c.timing->launch, LaunchKind::graph);
      continue;
    }
    EXPECT_EQ(c.disposition, Disposition::skipped);
    EXPECT_EQ(c.reason.rfind("cannot be captured in a CUDA graph: ", 0), 0u) << c.reason;
    EXPECT_NE(c.reason.find("; time it with --launch stream"), std::string::npos) << c.reason;
    EXPECT_NE(c.reason.find("cudaErrorStreamCapture"), std::string::npos) << "the runtime's error: " << c.reason;
    EXPECT_FALSE(c.timing.has_value());
    ASSERT_TRUE(c.verify.has_value()) << "verified before the capture was tried";
    EXPECT_TRUE(c.verify->passed);
  }
  const KwbRun stream = run_kwb(args + " --launch stream", dir.path() / "stream");
  EXPECT_EQ(stream.result.exit_code, 0) << stream.result.output;
  for (const CaseRecord& c : stream.report.cases) EXPECT_EQ(c.disposition, Disposition::passed) << c.variant << ": " << c.reason;
}

TEST(GraphLaunch, ReplaysThatDoNotReproduceTheVerifiedOutputFailUnderEitherTimer) {
  KWB_REQUIRE_GPU();
  const test::TempDir dir;
  for (const std::string timer : {"cupti", "events"}) {
    SCOPED_TRACE(timer);
    // Correct on its first launch (verified), half the rows on every later one: the captured one.
    const KwbRun r = run_kwb("--op rmsnorm_fwd --variant test_timed_half_rows --include-test-variants --dtype bf16 "
                          "--axis rows=1024 --axis cols=4096 --preset quick --launch graph --timer " + timer,
                          dir.path() / timer);
    EXPECT_EQ(r.result.exit_code, 1) << r.result.output;
    const CaseRecord& c = only_case(r);
    EXPECT_EQ(c.disposition, Disposition::failed);
    EXPECT_NE(c.reason.find("timed launches did not reproduce the verified output"), std::string::npos) << c.reason;
  }
}

TEST(GraphLaunch, EventsTimeReplaysWithoutAPerKernelOverhead) {
  KWB_REQUIRE_GPU();
  const test::TempDir dir;
  const KwbRun r = run_kwb("--op rmsnorm_fwd --variant baseline_eager_8_launches --dtype bf16 --axis rows=1024 "
                        "--axis cols=4096 --preset quick --timer events --launch graph --mode hot",
                        dir.path());
  ASSERT_EQ(r.result.exit_code, 0) << r.result.output;
  const CaseRecord& c = only_case(r);
  ASSERT_TRUE(c.timing.has_value()) << c.reason;
  EXPECT_EQ(c.timing->timer, "cuda_events");
  EXPECT_EQ(c.timing->launch, LaunchKind::graph);
  EXPECT_FALSE(c.timing->launch_overhead_us.has_value()) << "events cannot count the kernels to divide by";
  EXPECT_GT(c.timing->span.median, 0);
}

}  // namespace
}  // namespace kwb
