// The Live run panel's model on a real GPU: the app's frame loop is stood in for by a poll every
// 16 ms (the GPU machine has no GLFW, so the windows are not built there; the model they draw
// from is). A real sweep runs in real `kwb` worker processes, CUPTI-timed and verified, and its
// records stream into the Workbench as they finish. Skipped, with the reason, without a GPU.
#include "gui/model/live_run.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "gui/model/report_loader.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace kwb::gui {
namespace {

using namespace std::chrono_literals;

// `shapes` rmsnorm cases of the baseline and one fused variant, as typed in the panel.
LiveRunRequest rmsnorm_request(const std::string& rows, const std::filesystem::path& out) {
  LiveRunRequest r;
  r.ops = "rmsnorm_fwd";
  r.variants = "baseline_eager_8_launches, fused_v2_vec16";
  r.dtypes = "bf16";
  r.axes = "rows=" + rows + " cols=4096";
  r.preset = "quick";
  r.out = out.string();
  r.worker_exe = KWB_CLI_PATH;
  r.datasheet_ceilings = true;  // the test is about streaming; the ceilings' own tests measure them
  return r;
}

// Polls at the frame rate until the run is over; `each` sees the workbench after every poll.
template <typename Each>
void poll_like_the_frame_loop(LiveRun& live, Workbench& wb, Each each) {
  const auto deadline = std::chrono::steady_clock::now() + 300s;
  while (!live.finished()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the live run never finished: " << live.status();
    live.poll(wb);
    each();
    std::this_thread::sleep_for(16ms);
  }
}

TEST(LiveRunOnGpu, ASweepStreamsMeasuredVerifiedRecordsIntoTheWorkbench) {
  KWB_REQUIRE_GPU();
  test::TempDir dir;
  Workbench wb;
  LiveRun live;
  ASSERT_TRUE(live.start(rmsnorm_request("1024,2048,4096,8192,16384", dir.path() / "live"), wb)) << live.error();
  std::vector<std::size_t> rows_seen;
  poll_like_the_frame_loop(live, wb, [&] { rows_seen.push_back(wb.rows().size()); });

  // Streaming: some frame drew part of the sweep, and the table only grew.
  EXPECT_TRUE(std::any_of(rows_seen.begin(), rows_seen.end(), [](std::size_t n) { return n > 0 && n < 10; }))
      << "no frame saw a partial run";
  EXPECT_TRUE(std::is_sorted(rows_seen.begin(), rows_seen.end()));

  ASSERT_EQ(live.outcome(), SessionOutcome::completed) << live.status();
  EXPECT_TRUE(live.error().empty()) << live.error();
  EXPECT_EQ(live.received(), 10u);
  ASSERT_TRUE(live.report_path().has_value());
  ASSERT_EQ(wb.reports().size(), 1u);
  const Report& report = wb.reports()[0].report;
  EXPECT_TRUE(report.run.complete);
  ASSERT_TRUE(report.run.device.has_value()) << "the saved report names the GPU";
  EXPECT_FALSE(report.run.device->name.empty());
  ASSERT_EQ(report.cases.size(), 10u);
  for (const CaseRecord& c : report.cases) {
    SCOPED_TRACE(c.variant + " rows=" + std::to_string(c.shape.at("rows")));
    EXPECT_EQ(c.disposition, Disposition::passed) << "every case is verified against the oracle";
    ASSERT_TRUE(c.timing.has_value());
    EXPECT_EQ(c.timing->timer, "cupti");
    EXPECT_GT(c.timing->span.median, 0);
    ASSERT_TRUE(c.derived.has_value());
    EXPECT_GT(c.derived->bandwidth_gbps, 0);
    // The baseline's eight launches and the fused one, as CUPTI counted them.
    EXPECT_EQ(c.timing->kernels_per_sample, c.role == Role::baseline ? 8 : 1);
  }
  // The saved report opens in another workbench like any report.
  Workbench other;
  ASSERT_TRUE(other.open(*live.report_path()));
  EXPECT_EQ(other.rows().size(), 10u);
}

TEST(LiveRunOnGpu, CancelKeepsTheMeasuredCasesAndSavesThem) {
  KWB_REQUIRE_GPU();
  test::TempDir dir;
  Workbench wb;
  LiveRun live;
  ASSERT_TRUE(live.start(rmsnorm_request("1024,2048,3072,4096,5120,6144,7168,8192,9216,10240", dir.path() / "cut"), wb))
      << live.error();
  bool cancelled = false;
  poll_like_the_frame_loop(live, wb, [&] {
    if (!cancelled && live.received() >= 2) {
      live.cancel(CancelMode::finish_current);
      cancelled = true;
    }
  });
  ASSERT_TRUE(cancelled);
  ASSERT_EQ(live.outcome(), SessionOutcome::cancelled) << live.status();
  EXPECT_GE(live.received(), 2u);
  EXPECT_LT(live.received(), 20u) << "no case starts after the cancel";
  ASSERT_TRUE(live.report_path().has_value()) << live.error();
  const LoadOutcome saved = load_report(*live.report_path());
  ASSERT_TRUE(saved.loaded) << saved.error;
  EXPECT_EQ(saved.loaded->report.cases.size(), live.received());
  EXPECT_FALSE(saved.loaded->report.run.complete);
  for (const CaseRecord& c : saved.loaded->report.cases) EXPECT_EQ(c.disposition, Disposition::passed);
  EXPECT_EQ(wb.rows().size(), live.received());
}

}  // namespace
}  // namespace kwb::gui
