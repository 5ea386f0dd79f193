// kwb::Session driven as the app and suites drive it: records in order, progress and ETA, both
// kinds of cancel, the no-GPU hello and the refusals made before anything runs. A fake executor
// (deterministic, with a per-case delay the test controls) stands in for the GPU worker; one test
// drives the real Supervisor with a scripted worker to prove that abandon ends a live process.
#include "harness/session/session.hpp"
#include "harness/record/json_report.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>

#include "harness/plan/planner.hpp"
#include "harness/record/record_json.hpp"
#include "harness/record/journal_reader.hpp"
#include "tests/harness/session/fake_executor.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

using fakes::FakeExecutor;

// A plan of `rows.size()` rmsnorm cases (one variant, one dtype) at seeded random row counts.
std::vector<CaseRequest> plan_of(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string rows;
  std::vector<std::int64_t> used;
  while (used.size() < n) {
    const std::int64_t r = std::uniform_int_distribution<std::int64_t>(1, 100000)(rng);
    if (std::find(used.begin(), used.end(), r) != used.end()) continue;
    used.push_back(r);
    rows += (rows.empty() ? "" : ",") + std::to_string(r);
  }
  PlanRequest req;
  req.ops = {"rmsnorm_fwd"};
  req.variants = {"fused_v2_vec16"};
  req.dtypes = {DType::bf16};
  req.axes = {parse_axis_assignment("rows=" + rows), parse_axis_assignment("cols=4096")};
  req.seed = seed;
  auto cases = plan_cases(req, Registry::instance());
  EXPECT_EQ(cases.size(), n);
  return cases;
}

SessionOptions quiet_options() {
  SessionOptions o;
  o.ceilings = CeilingsChoice::datasheet;
  o.queue_records = true;
  return o;
}

struct Harness {
  std::shared_ptr<FakeExecutor::Shared> shared = std::make_shared<FakeExecutor::Shared>();
  FakeExecutor* fake = nullptr;
  std::unique_ptr<FakeExecutor> make(std::chrono::milliseconds delay, std::uint64_t seed) {
    auto e = std::make_unique<FakeExecutor>(shared, delay, seed);
    fake = e.get();
    return e;
  }
  // Blocks until run_case has seen case `index` (it is then in flight).
  void wait_started(int index) {
    std::unique_lock lock(shared->mutex);
    ASSERT_TRUE(shared->changed.wait_for(lock, 10s, [&] {
      return std::find(shared->started.begin(), shared->started.end(), index) != shared->started.end();
    })) << "case " << index << " never started";
  }
};

TEST(Session, RecordsArriveInPlanOrderThroughCallbackAndQueue) {
  Harness h;
  const auto cases = plan_of(7, 11);
  std::vector<int> via_callback;
  SessionCallbacks cb;
  cb.on_record = [&](const CaseRecord& r, const SessionProgress& p) {
    via_callback.push_back(r.index);
    EXPECT_EQ(p.done, via_callback.size());
    EXPECT_FALSE(r.repro.empty());  // derived by the session, not the executor
  };
  Session session(cases, quiet_options(), h.make(0ms, 11), cb);
  const SessionResult result = session.run();
  ASSERT_EQ(result.outcome, SessionOutcome::completed) << result.message;
  EXPECT_EQ(via_callback, (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
  const auto queued = session.take_records();
  ASSERT_EQ(queued.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(queued[i].index, cases[i].index);
    EXPECT_EQ(queued[i].shape, cases[i].shape);
    EXPECT_TRUE(queued[i].derived.has_value()) << "metrics are derived before delivery";
  }
  EXPECT_TRUE(result.report.run.complete);
  EXPECT_EQ(result.report.cases.size(), cases.size());
  EXPECT_EQ(result.report.run.settings.at("cases_planned"), "7");
  EXPECT_EQ(result.report.run.ceilings->source.rfind("datasheet", 0), 0u) << result.report.run.ceilings->source;
  EXPECT_EQ(h.shared->ceilings_measured, 0) << "datasheet ceilings measure nothing";
}

TEST(Session, RecordsSayWhatRanThemAndSpeedupsNameTheBaselinesMath) {
  Harness h;
  PlanRequest req;
  req.ops = {"linear_bias_relu"};
  req.variants = {"baseline_cublas_then_bias_relu", "fused_v2_smem_tiled"};
  req.dtypes = {DType::fp32, DType::bf16};
  req.axes = {parse_axis_assignment("m=256"), parse_axis_assignment("n=256"), parse_axis_assignment("k=256")};
  const auto cases = plan_cases(req, Registry::instance());
  ASSERT_EQ(cases.size(), 4u);
  Session session(cases, quiet_options(), h.make(0ms, 5), {});
  const SessionResult result = session.run();
  ASSERT_EQ(result.outcome, SessionOutcome::completed) << result.message;
  int checked = 0;
  for (const CaseRecord& r : result.report.cases) {
    const bool library = r.variant == "baseline_cublas_then_bias_relu";
    // The library GEMM runs fp32 in full fp32 and bf16 on the tensor cores; the tiled kernel runs
    // fp32 on the CUDA cores at every dtype.
    EXPECT_EQ(r.uses, library ? std::vector<std::string>{"cuBLASLt"} : std::vector<std::string>{}) << r.variant;
    EXPECT_EQ(r.math, library && r.dtype == DType::bf16 ? "bf16, fp32 acc" : "fp32") << r.nvtx_range;
    ASSERT_TRUE(r.derived && r.derived->speedup_vs_baseline) << r.nvtx_range;
    EXPECT_EQ(r.derived->baseline_math, r.dtype == DType::bf16 ? "bf16, fp32 acc" : "fp32") << r.nvtx_range;
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

TEST(Session, EachCaseIsAnnouncedWhenItStartsWithItsNameInFlightBeforeItsRecord) {
  Harness h;
  const auto cases = plan_of(5, 31);
  std::vector<std::string> events;
  SessionCallbacks cb;
  cb.on_started = [&](const CaseRequest& c, const SessionProgress& p) {
    const std::string name = fmt::format("{}:{}:{}:{}", c.op, c.variant, to_string(c.dtype), c.shape.to_compact());
    EXPECT_EQ(p.current, name) << "progress names the case now in flight";
    EXPECT_EQ(p.done, static_cast<std::size_t>(c.index)) << "the cases before it are done, not it";
    EXPECT_EQ(p.total, cases.size());
    events.push_back("start " + std::to_string(c.index));
  };
  cb.on_record = [&](const CaseRecord& r, const SessionProgress& p) {
    EXPECT_TRUE(p.current.empty()) << "none in flight between cases on one GPU: " << p.current;
    events.push_back("record " + std::to_string(r.index));
  };
  Session session(cases, quiet_options(), h.make(0ms, 31), cb);
  ASSERT_EQ(session.run().outcome, SessionOutcome::completed);
  std::vector<std::string> expected;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    expected.push_back("start " + std::to_string(i));
    expected.push_back("record " + std::to_string(i));
  }
  EXPECT_EQ(events, expected);
}

TEST(Session, ProgressCountsAndEtaAdvanceFromAnotherThread) {
  Harness h;
  const auto cases = plan_of(6, 23);
  Session session(cases, quiet_options(), h.make(40ms, 23));
  EXPECT_EQ(session.progress().state, SessionState::not_started);
  EXPECT_EQ(session.progress().total, 6u);
  session.start();
  std::size_t last_done = 0;
  double last_elapsed = 0;
  std::vector<double> etas;
  std::size_t records_seen = 0;
  const auto deadline = Clock::now() + 20s;
  while (Clock::now() < deadline) {
    const SessionProgress p = session.progress();
    EXPECT_GE(p.done, last_done);
    EXPECT_GE(p.elapsed_s, last_elapsed);
    EXPECT_EQ(p.total, 6u);
    if (p.done > 0 && p.state == SessionState::running) {
      ASSERT_TRUE(p.eta_s.has_value());
      // Mean wall time per case (~40 ms) times what is left.
      EXPECT_GT(*p.eta_s, 0.5 * 0.040 * double(p.total - p.done) - 1e-9);
      EXPECT_LT(*p.eta_s, 5.0 * 0.040 * double(p.total - p.done) + 1e-9);
      if (p.done != last_done) etas.push_back(*p.eta_s);
    } else if (p.done == 0) {
      EXPECT_FALSE(p.eta_s.has_value()) << "no ETA before a case has finished";
    }
    last_done = p.done;
    last_elapsed = p.elapsed_s;
    while (session.wait_record(5ms)) ++records_seen;
    if (p.state == SessionState::finished) break;
  }
  const SessionResult result = session.wait();
  while (session.wait_record(0ms)) ++records_seen;
  ASSERT_EQ(result.outcome, SessionOutcome::completed);
  EXPECT_EQ(records_seen, 6u);
  EXPECT_GE(etas.size(), 2u) << "progress was polled while cases ran";
  if (etas.size() >= 2) EXPECT_LT(etas.back(), etas.front()) << "the ETA shrinks as cases finish";
  const SessionProgress end = session.progress();
  EXPECT_EQ(end.done, 6u);
  EXPECT_EQ(end.state, SessionState::finished);
  EXPECT_GE(end.elapsed_s, 6 * 0.040);
}

TEST(Session, CancelAfterCurrentFinishesTheCaseInFlightAndStops) {
  Harness h;
  const auto cases = plan_of(8, 37);
  Session session(cases, quiet_options(), h.make(60ms, 37));
  session.start();
  h.wait_started(2);
  session.cancel(CancelMode::finish_current);
  EXPECT_TRUE(session.progress().cancel_requested);
  const SessionResult result = session.wait();
  EXPECT_EQ(result.outcome, SessionOutcome::cancelled);
  EXPECT_FALSE(result.report.run.complete);
  ASSERT_EQ(result.report.cases.size(), 3u) << "cases 0, 1 and the one in flight";
  EXPECT_EQ(result.report.cases[2].disposition, Disposition::passed) << result.report.cases[2].reason;
  EXPECT_TRUE(result.report.cases[2].timing.has_value());
  EXPECT_EQ(h.shared->started, (std::vector<int>{0, 1, 2})) << "no case starts after the cancel";
}

TEST(Session, CancelAbandonReturnsQuicklyAndMarksTheCase) {
  Harness h;
  const auto cases = plan_of(5, 41);
  auto executor = h.make(5ms, 41);
  executor->slow_case_ = 1;
  executor->slow_case_delay_ = 60s;  // a hung kernel
  Session session(cases, quiet_options(), std::move(executor));
  session.start();
  h.wait_started(1);
  const auto t0 = Clock::now();
  session.cancel(CancelMode::abandon_current);
  const SessionResult result = session.wait();
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 5.0);
  EXPECT_EQ(result.outcome, SessionOutcome::cancelled);
  EXPECT_FALSE(result.report.run.complete);
  ASSERT_EQ(result.report.cases.size(), 2u);
  EXPECT_EQ(result.report.cases[0].disposition, Disposition::passed);
  EXPECT_EQ(result.report.cases[1].disposition, Disposition::failed);
  EXPECT_EQ(result.report.cases[1].reason.rfind("cancelled", 0), 0u) << result.report.cases[1].reason;
  EXPECT_TRUE(result.any_case_failed());
}

TEST(Session, NoGpuHelloIsReportedAndNothingRuns) {
  Harness h;
  test::TempDir dir;
  auto executor = h.make(0ms, 5);
  executor->hello_.has_gpu = false;
  executor->hello_.device_count = 0;
  executor->hello_.no_gpu_reason = "cudaErrorNoDevice: no CUDA-capable device is detected";
  SessionOptions o = quiet_options();
  o.out = dir / "out";
  Session session(plan_of(3, 5), o, std::move(executor));
  const SessionResult result = session.run();
  EXPECT_EQ(result.outcome, SessionOutcome::no_gpu);
  EXPECT_EQ(result.message, "cudaErrorNoDevice: no CUDA-capable device is detected");
  EXPECT_TRUE(h.shared->started.empty());
  EXPECT_TRUE(result.report.cases.empty());
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "report.json"));
  EXPECT_EQ(session.progress().state, SessionState::finished);
}

TEST(Session, DeviceIndexPastTheDeviceCountIsBadInput) {
  Harness h;
  auto executor = h.make(0ms, 6);
  executor->hello_.has_gpu = false;
  executor->hello_.device_count = 2;
  executor->hello_.no_gpu_reason = "device 7 does not exist";
  SessionOptions o = quiet_options();
  o.device = 7;
  Session session(plan_of(2, 6), o, std::move(executor));
  const SessionResult result = session.run();
  EXPECT_EQ(result.outcome, SessionOutcome::bad_input);
  EXPECT_NE(result.message.find("--device"), std::string::npos) << result.message;
  EXPECT_NE(result.message.find("0..1"), std::string::npos) << result.message;
  EXPECT_TRUE(h.shared->started.empty());
}

TEST(Session, BadOptionsAreRefusedBeforeTheExecutorStarts) {
  const std::vector<std::pair<std::function<void(SessionOptions&)>, std::string>> bad = {
      {[](SessionOptions& o) { o.timer = "nvtx"; }, "--timer"},
      {[](SessionOptions& o) { o.case_timeout_s = -3.5; }, "--case-timeout"},
      {[](SessionOptions& o) { o.case_timeout_s = std::numeric_limits<double>::infinity(); }, "--case-timeout"},
      {[](SessionOptions& o) { o.case_timeout_s = std::nan(""); }, "--case-timeout"},
      {[](SessionOptions& o) { o.device = -2; }, "--device"},
      {[](SessionOptions& o) { o.out = "/proc/self"; }, "--out"},
  };
  for (const auto& [spoil, flag] : bad) {
    Harness h;
    SessionOptions o = quiet_options();
    spoil(o);
    Session session(plan_of(2, 9), o, h.make(0ms, 9));
    const SessionResult result = session.run();
    EXPECT_EQ(result.outcome, SessionOutcome::bad_input) << flag;
    EXPECT_NE(result.message.find(flag), std::string::npos) << result.message;
    EXPECT_FALSE(h.shared->hello_called) << flag << ": refused before anything started";
  }
}

TEST(Session, PlanThatDoesNotFitTheDeviceIsBadInput) {
  Harness h;
  auto executor = h.make(0ms, 13);
  executor->hello_.device.global_mem_bytes = std::int64_t(1) << 30;  // 1 GiB: nothing fits
  Session session(plan_of(3, 13), quiet_options(), std::move(executor));
  const SessionResult result = session.run();
  EXPECT_EQ(result.outcome, SessionOutcome::bad_input);
  EXPECT_NE(result.message.find("GiB"), std::string::npos) << result.message;
  EXPECT_TRUE(h.shared->started.empty());
}

TEST(Session, OutFolderGetsTheJournalCaseByCaseAndTheReportAtTheEnd) {
  Harness h;
  test::TempDir dir;
  SessionOptions o = quiet_options();
  o.out = dir / "out";
  SessionCallbacks cb;
  std::vector<std::size_t> journal_sizes;
  cb.on_record = [&](const CaseRecord&, const SessionProgress&) {
    journal_sizes.push_back(read_journal(dir / "out" / "journal.jsonl").size());
    EXPECT_FALSE(std::filesystem::exists(dir / "out" / "report.json")) << "the report is written at the end";
  };
  Session session(plan_of(4, 17), o, h.make(0ms, 17), cb);
  const SessionResult result = session.run();
  ASSERT_EQ(result.outcome, SessionOutcome::completed);
  EXPECT_TRUE(result.write_errors.empty());
  EXPECT_EQ(journal_sizes, (std::vector<std::size_t>{1, 2, 3, 4}));
  const Report written = read_report_json(dir / "out" / "report.json");
  EXPECT_TRUE(written.run.complete);
  ASSERT_EQ(written.cases.size(), 4u);
  EXPECT_EQ(written.cases[3].timing->span.median, result.report.cases[3].timing->span.median);
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "report.csv"));
}

TEST(Session, MeasuresCeilingsOnceAndThenUsesTheCache) {
  test::TempDir dir;
  const char* old = std::getenv("KWB_CACHE_DIR");
  const std::string saved = old ? old : "";
  setenv("KWB_CACHE_DIR", (dir / "cache").c_str(), 1);
  for (int run = 0; run < 2; ++run) {
    Harness h;
    SessionOptions o = quiet_options();
    o.ceilings = CeilingsChoice::cached_or_measured;
    std::vector<std::string> notes;
    SessionCallbacks cb;
    cb.on_note = [&](const std::string& n) { notes.push_back(n); };
    Session session(plan_of(2, 19), o, h.make(0ms, 19), cb);
    const SessionResult result = session.run();
    ASSERT_EQ(result.outcome, SessionOutcome::completed);
    EXPECT_EQ(h.shared->ceilings_measured, run == 0 ? 1 : 0) << "run " << run;
    EXPECT_EQ(result.report.run.ceilings->source, "measured");
    EXPECT_DOUBLE_EQ(result.report.run.ceilings->dram_copy_gbps, 3000);
    ASSERT_FALSE(notes.empty());
    EXPECT_NE(notes.back().find("2 cases on Fake GPU"), std::string::npos) << notes.back();
  }
  if (old) setenv("KWB_CACHE_DIR", saved.c_str(), 1);
  else unsetenv("KWB_CACHE_DIR");
}

// A cached ceiling is re-checked by a short copy at the start of every run: kept when the copy
// reads at most 3% above it (or cannot run), measured again (and re-cached) when it reads more;
// the console and the report's settings say which.
TEST(Session, CachedCeilingsAreRecheckedByAShortCopyAndRemeasuredWhenItReadsAbove) {
  test::TempDir dir;
  const char* old = std::getenv("KWB_CACHE_DIR");
  const std::string saved = old ? old : "";
  setenv("KWB_CACHE_DIR", (dir / "cache").c_str(), 1);
  struct Run {
    std::optional<double> short_copy;  // the fake's reading; the cache holds 3000 GB/s
    int measured;                      // ceilings measured in this run
    const char* says;                  // in the note and the report's ceilings_check
  };
  const Run runs[] = {{std::nullopt, 1, ""},          // no cache yet: measured, nothing re-checked
                      {3050.0, 0, "+1.7%"},           // within 3%: kept
                      {std::nullopt, 0, "not re-checked"},  // no short copy: kept, and said so
                      {3200.0, 1, "measured again"}};  // +6.7%: stale, measured again
  for (std::size_t run = 0; run < std::size(runs); ++run) {
    Harness h;
    h.shared->short_copy_gbps = runs[run].short_copy;
    SessionOptions o = quiet_options();
    o.ceilings = CeilingsChoice::cached_or_measured;
    std::vector<std::string> notes;
    SessionCallbacks cb;
    cb.on_note = [&](const std::string& n) { notes.push_back(n); };
    Session session(plan_of(2, 29), o, h.make(0ms, 29), cb);
    const SessionResult result = session.run();
    ASSERT_EQ(result.outcome, SessionOutcome::completed) << result.message;
    EXPECT_EQ(h.shared->ceilings_measured, runs[run].measured) << "run " << run;
    EXPECT_EQ(h.shared->copy_checks, run == 0 ? 0 : 1) << "run " << run << ": a cache exists from run 1 on";
    const auto& settings = result.report.run.settings;
    if (run == 0) {
      EXPECT_EQ(settings.count("ceilings_check"), 0u);
      continue;
    }
    ASSERT_EQ(settings.count("ceilings_check"), 1u) << "run " << run;
    EXPECT_NE(settings.at("ceilings_check").find(runs[run].says), std::string::npos) << settings.at("ceilings_check");
    EXPECT_NE(settings.at("ceilings_check").find("3000 GB/s"), std::string::npos) << settings.at("ceilings_check");
    EXPECT_NE(std::find(notes.begin(), notes.end(), settings.at("ceilings_check")), notes.end())
        << "the console says it too";
  }
  if (old) setenv("KWB_CACHE_DIR", saved.c_str(), 1);
  else unsetenv("KWB_CACHE_DIR");
}

// A suite's `ceilings: measure`: measured on every run even with a cache (as `kwb ceilings
// --refresh`), the cache updated; the suite reaches the report as it was given.
TEST(Session, MeasureFreshIgnoresTheCacheAndTheSuiteReachesTheReport) {
  test::TempDir dir;
  const char* old = std::getenv("KWB_CACHE_DIR");
  const std::string saved = old ? old : "";
  setenv("KWB_CACHE_DIR", (dir / "cache").c_str(), 1);
  for (int run = 0; run < 3; ++run) {
    Harness h;
    SessionOptions o = quiet_options();
    o.ceilings = run == 0 ? CeilingsChoice::cached_or_measured : CeilingsChoice::measure_fresh;
    o.suite = SuiteInfo{.name = "roofline-review", .path = "suites/roofline-review.yaml", .default_threshold = 0.03};
    Session session(plan_of(2, 23), o, h.make(0ms, 23));
    const SessionResult result = session.run();
    ASSERT_EQ(result.outcome, SessionOutcome::completed);
    EXPECT_EQ(h.shared->ceilings_measured, 1) << "run " << run << ": the cache exists from run 0 on";
    EXPECT_EQ(result.report.run.ceilings->source, "measured");
    ASSERT_TRUE(result.report.run.suite);
    EXPECT_EQ(result.report.run.suite->name, "roofline-review");
    EXPECT_DOUBLE_EQ(result.report.run.suite->default_threshold, 0.03);
  }
  if (old) setenv("KWB_CACHE_DIR", saved.c_str(), 1);
  else unsetenv("KWB_CACHE_DIR");
}

// The real Supervisor with a scripted worker: it says hello, then never answers the case (a
// hung kernel). Abandon must kill it and return at once, not after the 60 s watchdog.
TEST(Session, AbandonEndsARealWorkerProcessWithoutWaitingForTheWatchdog) {
  test::TempDir dir;
  DeviceInfo device;
  device.name = "Scripted GPU";
  device.uuid = "GPU-script";
  device.global_mem_bytes = std::int64_t(80) << 30;
  device.l2_bytes = 50 << 20;
  const std::string hello = dump_json(nlohmann::ordered_json{
      {"event", "hello"}, {"device", to_json(device)}, {"timer", "cupti"}, {"timer_note", ""}, {"device_count", 1}});
  const auto script = dir / "worker.sh";
  {
    std::ofstream out(script);
    std::string quoted;
    for (char c : hello) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out << "#!/bin/sh\nprintf '%s\\n' '" << quoted << "' >&3\nread line\nexec sleep 60\n";
  }
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  SessionOptions o = quiet_options();
  o.worker_exe = script.string();
  o.case_timeout_s = 60;
  o.out = dir / "out";
  Session session(plan_of(3, 29), o);
  session.start();
  const auto deadline = Clock::now() + 20s;
  while (session.progress().current.empty() && Clock::now() < deadline) std::this_thread::sleep_for(5ms);
  std::this_thread::sleep_for(50ms);  // usually in flight by now; an abandon just before also counts
  const auto t0 = Clock::now();
  session.cancel(CancelMode::abandon_current);
  const SessionResult result = session.wait();
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 5.0);
  ASSERT_EQ(result.outcome, SessionOutcome::cancelled) << result.message;
  ASSERT_EQ(result.report.cases.size(), 1u);
  EXPECT_EQ(result.report.cases[0].disposition, Disposition::failed);
  EXPECT_EQ(result.report.cases[0].reason.rfind("cancelled", 0), 0u) << result.report.cases[0].reason;
  EXPECT_FALSE(read_report_json(dir / "out" / "report.json").run.complete);
}

}  // namespace
}  // namespace kwb
