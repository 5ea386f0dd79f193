// `kwb counters` through the real binary, on a machine without a GPU: --list shows the sets, their
// metrics with explanations and the passes they cost on GH100 (the chip of H100 and H200); --all
// every base metric; an unknown --chip, or no --list, is refused with exit 2. `kwb run`'s counter
// flags are refused before any GPU work when a set or a metric name is malformed.
#include <gtest/gtest.h>

#include "harness/plan/counter_sets.hpp"
#include "harness/plan/metric_host.hpp"
#include "tests/support/command.hpp"
#include "tests/support/mentions.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace counters_cli_test {
namespace {

using test::CommandResult;
using test::Mentions;
using test::shell_quote;

CommandResult kwb(const std::string& args) { return test::run_command(shell_quote(KWB_CLI_PATH) + " " + args); }

#define KWB_REQUIRE_HOST_API()                               \
  do {                                                       \
    if (auto why = host_api_problem()) GTEST_SKIP() << *why; \
  } while (0)

TEST(CountersCli, ListShowsEverySetItsMetricsExplainedAndItsPassesOnGh100) {
  KWB_REQUIRE_HOST_API();
  const CommandResult r = kwb("counters --list --chip GH100");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Mentions(r, "Counters of GH100 (--chip)"));
  const MetricCatalog gh100("GH100");
  for (const CounterSet& s : counter_sets()) {
    const int passes = gh100.passes(parse_counter_request({s.name}, {}).metrics);
    EXPECT_TRUE(Mentions(r, s.name + "  (" + std::to_string(s.metrics.size()) + " metrics, " + std::to_string(passes) +
                                " pass" + (passes == 1 ? "" : "es") + " with the duration)"));
    for (const std::string& m : s.metrics) EXPECT_TRUE(Mentions(r, m));
  }
  EXPECT_TRUE(Mentions(r, "memory  (13 metrics, 4 passes with the duration)"));
  EXPECT_TRUE(Mentions(r, "occupancy  (4 metrics, 1 pass with the duration)"));
  EXPECT_TRUE(Mentions(r, metric_explanation("dram__bytes_read.sum")));
  EXPECT_TRUE(Mentions(r, "--metrics NAME"));
}

TEST(CountersCli, ListWithoutAChipTakesThisGpusOrGh100) {
  KWB_REQUIRE_HOST_API();
  const CommandResult r = kwb("counters --list");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Mentions(r, "Counters of GH100 (no GPU here: the chip of H100 and H200") ||
              Mentions(r, "(this machine's GPU 0)"));
}

TEST(CountersCli, ListAllShowsEveryBaseMetricWithItsUnit) {
  KWB_REQUIRE_HOST_API();
  const CommandResult r = kwb("counters --list --all --chip GH100");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Mentions(r, "dram__bytes_read"));
  EXPECT_TRUE(Mentions(r, "lts__t_sectors_lookup_hit"));
  EXPECT_TRUE(Mentions(r, std::to_string(MetricCatalog("GH100").base_metrics().size()) + " base metrics"));
}

TEST(CountersCli, AnUnknownChipIsRefusedWithTheClosestName) {
  KWB_REQUIRE_HOST_API();
  const CommandResult r = kwb("counters --list --chip GH10");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "--chip"));
  EXPECT_TRUE(Mentions(r, "unknown chip 'GH10'"));
  EXPECT_TRUE(Mentions(r, "did you mean 'GH100'?"));
}

TEST(CountersCli, WithoutTheHostLibraryItSaysWhatIsMissingAndExitsOne) {
  const auto why = host_api_problem();
  if (!why) GTEST_SKIP() << "CUPTI's host API works here; this test is for machines where it cannot load";
  const CommandResult r = kwb("counters --list");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(Mentions(r, "libnvperf_host"));
  EXPECT_FALSE(Mentions(r, "--chip")) << "no chip was given";
}

TEST(CountersCli, WithoutListItSaysWhatToDo) {
  const CommandResult r = kwb("counters");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "--list"));
}

// ---- kwb run's counter flags ---------------------------------------------------------------

class RunCounterFlags : public ::testing::Test {
 protected:
  CommandResult run(const std::string& args) {
    return test::run_command("cd " + shell_quote(dir_.path().string()) + " && " + shell_quote(KWB_CLI_PATH) +
                             " run --op rmsnorm_fwd " + args + " --out " + shell_quote((dir_ / "out").string()));
  }
  test::TempDir dir_;
};

TEST_F(RunCounterFlags, AnUnknownSetIsRefusedWithTheClosestBeforeAnyGpuWork) {
  const CommandResult r = run("--counters memory,memry");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "--counters: unknown counter set 'memry' (did you mean 'memory'?)"));
  EXPECT_TRUE(Mentions(r, "kwb counters --list"));
  EXPECT_FALSE(Mentions(r, "no usable CUDA GPU")) << "the worker was started";
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out" / "report.json"));
}

TEST_F(RunCounterFlags, AMetricWithoutItsRollupIsRefused) {
  const CommandResult r = run("--metrics dram__bytes_read");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "--metrics: 'dram__bytes_read' is not a full metric name"));
  EXPECT_FALSE(Mentions(r, "no usable CUDA GPU")) << "the worker was started";
}

TEST_F(RunCounterFlags, ValidCountersPlanWithoutAGpu) {
  const CommandResult r = run("--variant fused_v2_vec16 --dtype bf16 --axis rows=1024 --axis cols=4096 "
                              "--counters memory --metrics l1tex__t_bytes.sum --list-cases");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Mentions(r, "rmsnorm_fwd"));
}

}  // namespace
}  // namespace counters_cli_test
}  // namespace kwb
