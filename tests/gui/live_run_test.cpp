// The Live run panel's model on CPU: a sweep planned from the panel's strings runs a real
// Session whose executor is the session tests' fake GPU worker (tests/harness/session/fake_executor.hpp),
// and LiveRun::poll(), called as the frame loop calls it, moves the records into the Workbench
// while the run goes. Proven here: results stream (a poll sees part of the run), progress and
// ETA, cancel keeps the finished cases, the saved report opens in the model, and bad input is a
// message, never a crash.
#include "gui/model/live_run.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>

#include "gui/model/report_loader.hpp"
#include "tests/harness/session/fake_executor.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb::gui {
namespace {

using namespace std::chrono_literals;
using fakes::FakeExecutor;

// The session tests' fake worker, `delay` per case.
ExecutorFactory fake_factory(std::chrono::milliseconds delay) {
  auto shared = std::make_shared<FakeExecutor::Shared>();
  return [shared, delay](int device) -> std::unique_ptr<CaseExecutor> {
    return std::make_unique<FakeExecutor>(shared, delay, 7 + device);
  };
}

// `rows` rmsnorm cases of one variant and dtype: the strings a person types in the panel.
LiveRunRequest request_of(int rows, const std::filesystem::path& out) {
  LiveRunRequest r;
  r.ops = "rmsnorm_fwd";
  r.variants = "fused_v2_vec16";
  r.dtypes = "bf16";
  std::string values;
  for (int i = 1; i <= rows; ++i) values += (i > 1 ? "," : "") + std::to_string(64 * i);
  r.axes = "rows=" + values + " cols=4096";
  r.out = out.string();
  r.datasheet_ceilings = true;  // the fake measures nothing worth a ceilings cache
  return r;
}

// Polls as the frame loop does (every few milliseconds) until the run is over; `each` sees the
// workbench after every poll.
template <typename Each>
void poll_until_finished(LiveRun& live, Workbench& wb, Each each) {
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!live.finished()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the live run never finished: " << live.status();
    live.poll(wb);
    each();
    std::this_thread::sleep_for(5ms);
  }
}

TEST(LiveRun, ResultsStreamIntoTheWorkbenchAndTheReportIsSaved) {
  test::TempDir dir;
  Workbench wb;
  LiveRun live;
  ASSERT_TRUE(live.start(request_of(8, dir.path() / "live"), wb, fake_factory(25ms))) << live.error();
  EXPECT_TRUE(live.running());
  std::vector<std::size_t> rows_seen;
  bool saw_eta = false;
  poll_until_finished(live, wb, [&] {
    rows_seen.push_back(wb.rows().size());
    if (live.finished()) return;
    const SessionProgress p = live.progress();
    EXPECT_EQ(p.total, 8u);
    EXPECT_LE(p.done, p.total);
    EXPECT_GE(p.done, live.received()) << "a record is counted before it is delivered";
    if (p.eta_s) {
      saw_eta = true;
      EXPECT_GE(*p.eta_s, 0.0);
      EXPECT_LT(*p.eta_s, 60.0) << "ETA is (total - done) x the mean case time (25 ms)";
      EXPECT_NE(live.status().find("left"), std::string::npos) << live.status();
    }
    EXPECT_NE(live.status().find("of 8 cases"), std::string::npos) << live.status();
  });
  // Streaming: some frame drew part of the run, and the rows only ever grew.
  EXPECT_TRUE(std::any_of(rows_seen.begin(), rows_seen.end(), [](std::size_t n) { return n > 0 && n < 8; }))
      << "no poll saw a partial run";
  EXPECT_TRUE(std::is_sorted(rows_seen.begin(), rows_seen.end()));
  EXPECT_TRUE(saw_eta);

  ASSERT_EQ(live.outcome(), SessionOutcome::completed) << live.error();
  EXPECT_TRUE(live.error().empty()) << live.error();
  EXPECT_EQ(live.received(), 8u);
  EXPECT_EQ(live.progress().done, 8u);
  ASSERT_TRUE(live.report_path().has_value());
  EXPECT_EQ(*live.report_path(), dir.path() / "live" / "report.json");
  // The live report became the saved one: one report in the model, with its run info.
  ASSERT_EQ(wb.reports().size(), 1u);
  EXPECT_EQ(wb.reports()[0].path, *live.report_path());
  EXPECT_EQ(wb.reports()[0].report.cases.size(), 8u);
  EXPECT_TRUE(wb.reports()[0].report.run.complete);
  EXPECT_EQ(wb.rows().size(), 8u);
  // ... and another workbench opens it like any report.
  Workbench other;
  ASSERT_TRUE(other.open(*live.report_path()));
  EXPECT_EQ(other.rows().size(), 8u);
  EXPECT_NE(live.status().find("saved as"), std::string::npos) << live.status();
}

TEST(LiveRun, CancelStopsTheRunAndKeepsTheFinishedCases) {
  test::TempDir dir;
  Workbench wb;
  LiveRun live;
  ASSERT_TRUE(live.start(request_of(30, dir.path() / "cancelled"), wb, fake_factory(40ms))) << live.error();
  bool cancelled = false;
  poll_until_finished(live, wb, [&] {
    if (!cancelled && live.received() >= 2) {
      live.cancel(CancelMode::finish_current);
      cancelled = true;
    }
  });
  ASSERT_TRUE(cancelled);
  ASSERT_EQ(live.outcome(), SessionOutcome::cancelled) << live.error();
  EXPECT_GE(live.received(), 2u);
  EXPECT_LT(live.received(), 30u) << "no case starts after the cancel";
  ASSERT_TRUE(live.report_path().has_value()) << live.error();
  const LoadOutcome saved = load_report(*live.report_path());
  ASSERT_TRUE(saved.loaded) << saved.error;
  EXPECT_EQ(saved.loaded->report.cases.size(), live.received()) << "the report holds what finished";
  EXPECT_FALSE(saved.loaded->report.run.complete);
  ASSERT_EQ(wb.reports().size(), 1u);
  EXPECT_EQ(wb.rows().size(), live.received());
  EXPECT_FALSE(live.running());
  live.cancel();  // after the end: nothing to do, no crash
}

TEST(LiveRun, BadInputIsAMessageAndStartsNothing) {
  test::TempDir dir;
  struct Case {
    const char* what;
    LiveRunRequest request;
    const char* mentions;
  };
  std::vector<Case> cases;
  auto base = request_of(2, dir.path() / "bad");
  auto r = base;
  r.ops = "no_such_op";
  cases.push_back({"unknown op", r, "no_such_op"});
  r = base;
  r.axes = "rows=abc";
  cases.push_back({"bad axis", r, "axes"});
  r = base;
  r.dtypes = "fp7";
  cases.push_back({"bad dtype", r, "fp7"});
  r = base;
  r.preset = "sloppy";
  cases.push_back({"bad preset", r, "sloppy"});
  r = base;
  r.axes = "";
  r.suite = (dir.path() / "missing.yaml").string();
  cases.push_back({"missing suite", r, "missing.yaml"});
  r = base;
  r.suite = (dir.path() / "missing.yaml").string();
  cases.push_back({"suite with axes", r, "suite"});
  for (const Case& c : cases) {
    Workbench wb;
    LiveRun live;
    EXPECT_FALSE(live.start(c.request, wb, fake_factory(0ms))) << c.what;
    EXPECT_FALSE(live.running()) << c.what;
    EXPECT_NE(live.error().find(c.mentions), std::string::npos) << c.what << ": " << live.error();
    EXPECT_NE(live.status().find(live.error()), std::string::npos) << c.what;
    EXPECT_TRUE(wb.reports().empty()) << c.what;
    EXPECT_EQ(live.poll(wb), 0u) << c.what;
  }
}

TEST(LiveRun, AnOutputFolderTheSessionRefusesLeavesTheWorkbenchAlone) {
  test::TempDir dir;
  std::ofstream(dir.path() / "a_file") << "not a folder";
  Workbench wb;
  LiveRun live;
  ASSERT_TRUE(live.start(request_of(2, dir.path() / "a_file" / "out"), wb, fake_factory(0ms)));
  poll_until_finished(live, wb, [] {});
  EXPECT_EQ(live.outcome(), SessionOutcome::bad_input);
  EXPECT_FALSE(live.error().empty());
  EXPECT_FALSE(live.report_path().has_value());
  EXPECT_TRUE(wb.reports().empty()) << "the live report joins with its first record";
  ASSERT_FALSE(wb.messages().empty());
  EXPECT_EQ(wb.messages().back().level, Message::Level::error);
}

TEST(LiveRun, ASecondStartWhileRunningIsRefused) {
  test::TempDir dir;
  Workbench wb;
  LiveRun live;
  ASSERT_TRUE(live.start(request_of(20, dir.path() / "one"), wb, fake_factory(40ms)));
  EXPECT_FALSE(live.start(request_of(2, dir.path() / "two"), wb, fake_factory(0ms)));
  EXPECT_NE(live.error().find("going"), std::string::npos) << live.error();
  // Destroying a LiveRun mid-run abandons the case in flight and joins: no hang, no crash.
}

TEST(LiveRun, WithoutAGpuThePanelHasAReason) {
  const GpuPresence& gpu = gpu_presence();
  if (gpu.present) GTEST_SKIP() << "a GPU is present here: the panel is enabled";
  EXPECT_FALSE(gpu.reason.empty());
  Workbench wb;
  LiveRun live;
  test::TempDir dir;
  EXPECT_FALSE(live.start(request_of(2, dir.path() / "x"), wb)) << "the real worker needs a GPU";
  EXPECT_NE(live.error().find("no GPU"), std::string::npos) << live.error();
}

}  // namespace
}  // namespace kwb::gui

namespace kwb::gui {
namespace {

// A suite that names a plugin: the panel's run loads it before planning, as `kwb run --suite`
// does, plans its op, and hands the very file to the workers.
TEST(LiveRun, ASuitesPluginsJoinThePlanAndGoToTheWorkers) {
  test::TempDir dir;
  const std::string plugin = std::string(KWB_TEST_PLUGIN_DIR) + "/libkwb_test_good_plugin.so";
  const auto suite = dir.path() / "with-plugin.yaml";
  std::ofstream(suite) << "name: with-plugin\nplugins: " << plugin << "\nentries:\n  - ops: plugin_test_copy\n"
                       << "    dtypes: fp32\n";
  LiveRunRequest r;
  r.suite = suite.string();
  r.preset = "quick";
  r.datasheet_ceilings = true;
  SessionOptions options;
  const std::vector<CaseRequest> cases = plan_live_run(r, options);
  ASSERT_FALSE(cases.empty());
  EXPECT_TRUE(std::all_of(cases.begin(), cases.end(), [](const CaseRequest& c) { return c.op == "plugin_test_copy"; }));
  const auto env = std::find_if(options.worker_environment.begin(), options.worker_environment.end(),
                                [](const auto& v) { return v.first == "KWB_PLUGINS"; });
  ASSERT_NE(env, options.worker_environment.end());
  EXPECT_NE(env->second.find("libkwb_test_good_plugin.so"), std::string::npos) << env->second;
}

}  // namespace
}  // namespace kwb::gui
