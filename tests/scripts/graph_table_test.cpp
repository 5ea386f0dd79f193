// scripts/graph_table.py, the device script's stream-against-graph table, on two reports written
// by the real JSON writer: a row per case timed in both, the agreement of the long cases, the gain
// of the launch-bound ones, the cases a graph could not capture, and exit 1 when a long case
// disagrees by more than 3%.
#include <gtest/gtest.h>

#include <string>

#include "harness/record/json_report.hpp"
#include "tests/reports/compare/compare_test_support.hpp"
#include "tests/support/command.hpp"
#include "tests/support/mentions.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace graph_table_test {
namespace {

using test::Mentions;
using test::shell_quote;

bool have_python3() { return test::run_command("python3 --version").exit_code == 0; }

// A stream or graph report: a long single kernel, a launch-bound 8-kernel baseline, and a variant
// the graph run skipped.
Report report_of(LaunchKind launch, double long_us, double baseline_us) {
  Report r = test::empty_report();
  r.run.settings["launch"] = std::string(to_string(launch));
  r.cases = {test::timed_case("rmsnorm_fwd", "fused_v2_vec16", 16384, {long_us, long_us, long_us}),
             test::timed_case("rmsnorm_fwd", "baseline_eager_8_launches", 1024, {baseline_us, baseline_us, baseline_us}),
             test::timed_case("rmsnorm_fwd", "test_graph_host_wait", 1024, {9, 9, 9})};
  r.cases[1].timing->kernels_per_sample = 8;
  for (auto& c : r.cases) {
    c.timing->launch = launch;
    c.timing->kernels_per_sample = c.timing->kernels_per_sample < 0 ? 1 : c.timing->kernels_per_sample;
    if (launch == LaunchKind::stream) c.timing->launch_overhead_us = 2.5;
  }
  if (launch == LaunchKind::graph) {
    r.cases[2].timing.reset();
    r.cases[2].disposition = Disposition::skipped;
    r.cases[2].reason = "cannot be captured in a CUDA graph: the launch: cudaErrorStreamCaptureUnsupported";
  }
  return r;
}

test::CommandResult graph_table(const test::TempDir& dir, const Report& stream, const Report& graph) {
  write_report_json(dir / "stream.json", stream);
  write_report_json(dir / "graph.json", graph);
  return test::run_command("python3 " + shell_quote(std::string(KWB_SOURCE_DIR) + "/scripts/graph_table.py") + " " +
                           shell_quote((dir / "stream.json").string()) + " " + shell_quote((dir / "graph.json").string()));
}

TEST(GraphTable, RowsPerCaseTheLongSingleKernelsAgreementAndTheMultiKernelGain) {
  if (!have_python3()) GTEST_SKIP() << "no python3 on the PATH: cannot run scripts/graph_table.py";
  const test::TempDir dir;
  const auto r = graph_table(dir, report_of(LaunchKind::stream, 400, 40), report_of(LaunchKind::graph, 404, 16));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Mentions(r.output, "rmsnorm_fwd:baseline_eager_8_launches:bf16:1024x4096       8      40.00      16.00        0.400           2.50"));
  EXPECT_TRUE(Mentions(r.output, "single-kernel cases of 50 us and more: 1 of 1 agree within 3%"));
  EXPECT_TRUE(Mentions(r.output, "multi-kernel cases: 1, stream/graph geometric mean 2.50x"));
  EXPECT_TRUE(Mentions(r.output, "not timed in both: rmsnorm_fwd:test_graph_host_wait:bf16:1024x4096: cannot be "
                                 "captured in a CUDA graph"));
}

TEST(GraphTable, ALongCaseThatDisagreesByMoreThanThreePercentFails) {
  if (!have_python3()) GTEST_SKIP() << "no python3 on the PATH: cannot run scripts/graph_table.py";
  const test::TempDir dir;
  const auto r = graph_table(dir, report_of(LaunchKind::stream, 400, 40), report_of(LaunchKind::graph, 420, 16));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(Mentions(r.output, "0 of 1 agree within 3%; furthest rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096 at "
                                 "graph/stream 1.050"));
}

TEST(GraphTable, ReportsGivenTheWrongWayRoundAreRefused) {
  if (!have_python3()) GTEST_SKIP() << "no python3 on the PATH: cannot run scripts/graph_table.py";
  const test::TempDir dir;
  const auto r = graph_table(dir, report_of(LaunchKind::graph, 404, 16), report_of(LaunchKind::stream, 400, 40));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r.output, "pass the --launch stream report first"));
}

}  // namespace
}  // namespace graph_table_test
}  // namespace kwb
