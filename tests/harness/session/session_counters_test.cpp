// Counters in a session, with the fake worker of the session tests saying hello from a GH100:
// every metric is checked against the chip before any case runs (an unknown one refused with a
// did-you-mean), a valid request is announced and recorded in the run's settings with its pass
// count, and counters the worker cannot read are noted once for the whole run, not per case.
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "harness/plan/counter_sets.hpp"
#include "harness/plan/metric_host.hpp"
#include "harness/plan/planner.hpp"
#include "harness/session/session.hpp"
#include "tests/harness/session/fake_executor.hpp"
#include "tests/support/mentions.hpp"

namespace kwb {
namespace {

using namespace std::chrono_literals;
using fakes::FakeExecutor;
using test::Mentions;

#define KWB_REQUIRE_HOST_API()                               \
  do {                                                       \
    if (auto why = host_api_problem()) GTEST_SKIP() << *why; \
  } while (0)

// `n` rmsnorm cases at seeded random row counts, each collecting these counters.
std::vector<CaseRequest> counted_plan(std::size_t n, std::uint64_t seed, const std::vector<std::string>& sets,
                                      const std::vector<std::string>& metrics) {
  std::mt19937_64 rng(seed);
  std::string rows;
  for (std::size_t i = 0; i < n; ++i)
    rows += (rows.empty() ? "" : ",") + std::to_string(1024 * (1 + i) + rng() % 1000);
  PlanRequest req;
  req.ops = {"rmsnorm_fwd"};
  req.variants = {"fused_v2_vec16"};
  req.dtypes = {DType::bf16};
  req.axes = {parse_axis_assignment("rows=" + rows), parse_axis_assignment("cols=4096")};
  req.seed = seed;
  auto cases = plan_cases(req, Registry::instance());
  EXPECT_EQ(cases.size(), n);
  const CounterRequest counters = parse_counter_request(sets, metrics);
  for (CaseRequest& c : cases) {
    c.counter_sets = counters.sets;
    c.counter_metrics = counters.metrics;
  }
  return cases;
}

struct SessionRun {
  SessionResult result;
  std::vector<std::string> notes;
  std::shared_ptr<FakeExecutor::Shared> shared;
};

SessionRun run_session(std::vector<CaseRequest> cases, std::function<void(FakeExecutor&)> setup = {}) {
  SessionRun r;
  r.shared = std::make_shared<FakeExecutor::Shared>();
  auto executor = std::make_unique<FakeExecutor>(r.shared, 0ms, 3);
  executor->hello_.device.chip = "GH100";
  if (setup) setup(*executor);
  SessionOptions o;
  o.ceilings = CeilingsChoice::datasheet;
  SessionCallbacks cb;
  cb.on_note = [&r](const std::string& n) { r.notes.push_back(n); };
  Session session(std::move(cases), o, std::move(executor), cb);
  r.result = session.run();
  return r;
}

int notes_mentioning(const std::vector<std::string>& notes, const std::string& part) {
  return static_cast<int>(std::count_if(notes.begin(), notes.end(),
                                        [&](const std::string& n) { return n.find(part) != std::string::npos; }));
}

TEST(SessionCounters, AMetricTheChipLacksIsRefusedBeforeAnyCaseRunsWithTheClosest) {
  KWB_REQUIRE_HOST_API();
  const SessionRun r = run_session(counted_plan(3, 5, {"memory"}, {"dram__bytes_reed.sum"}));
  EXPECT_EQ(r.result.outcome, SessionOutcome::bad_input);
  EXPECT_TRUE(Mentions(r.result.message, "--counters/--metrics"));
  EXPECT_TRUE(Mentions(r.result.message, "'dram__bytes_reed.sum' is not a metric of GH100"));
  EXPECT_TRUE(Mentions(r.result.message, "did you mean 'dram__bytes_read'?"));
  EXPECT_TRUE(Mentions(r.result.message, "kwb counters --list --chip GH100"));
  EXPECT_TRUE(r.shared->started.empty()) << "no case ran";
  EXPECT_TRUE(r.result.report.cases.empty());
}

TEST(SessionCounters, AnUnknownRollupIsRefusedWithTheClosestRollup) {
  KWB_REQUIRE_HOST_API();
  const SessionRun r = run_session(counted_plan(2, 6, {}, {"lts__t_sectors_lookup_hit.summ"}));
  EXPECT_EQ(r.result.outcome, SessionOutcome::bad_input);
  EXPECT_TRUE(Mentions(r.result.message, "did you mean 'lts__t_sectors_lookup_hit.sum'?"));
  EXPECT_TRUE(r.shared->started.empty());
}

TEST(SessionCounters, AValidRequestIsAnnouncedAndRecordedWithItsPassCount) {
  KWB_REQUIRE_HOST_API();
  const auto cases = counted_plan(3, 7, {"memory"}, {});
  const int passes = MetricCatalog("GH100").passes(cases[0].counter_metrics);
  const SessionRun r = run_session(cases);
  ASSERT_EQ(r.result.outcome, SessionOutcome::completed) << r.result.message;
  EXPECT_EQ(r.shared->started.size(), 3u);
  const auto& settings = r.result.report.run.settings;
  ASSERT_TRUE(settings.contains("counters"));
  const std::string& said = settings.at("counters");
  EXPECT_TRUE(Mentions(said, "memory: 14 metrics"));  // 13 and the duration
  EXPECT_TRUE(Mentions(said, std::to_string(passes) + " replay passes per case on GH100"));
  EXPECT_EQ(notes_mentioning(r.notes, "counters: memory: 14 metrics"), 1) << ::testing::PrintToString(r.notes);
}

TEST(SessionCounters, MetricsAloneAreCalledMetrics) {
  KWB_REQUIRE_HOST_API();
  const SessionRun r = run_session(counted_plan(1, 8, {}, {"dram__bytes_read.sum"}));
  ASSERT_EQ(r.result.outcome, SessionOutcome::completed) << r.result.message;
  EXPECT_TRUE(Mentions(r.result.report.run.settings.at("counters"), "metrics: 2 metrics, 1 replay pass per case"));
}

TEST(SessionCounters, WithoutCountersNothingIsSaidOrRecorded) {
  const SessionRun r = run_session(counted_plan(2, 9, {}, {}));
  ASSERT_EQ(r.result.outcome, SessionOutcome::completed) << r.result.message;
  EXPECT_FALSE(r.result.report.run.settings.contains("counters"));
  EXPECT_EQ(notes_mentioning(r.notes, "counters"), 0) << ::testing::PrintToString(r.notes);
}

TEST(SessionCounters, AGpuWithoutAChipNameIsLeftToTheWorker) {
  const SessionRun r = run_session(counted_plan(2, 10, {"memory"}, {"not_a_metric.sum"}),
                    [](FakeExecutor& e) { e.hello_.device.chip.clear(); });
  ASSERT_EQ(r.result.outcome, SessionOutcome::completed) << r.result.message;
  EXPECT_TRUE(Mentions(r.result.report.run.settings.at("counters"), "the worker will say whether it can read them"));
}

// Where CUPTI's host library cannot load (this machine's, so the worker's too), nothing can be
// checked or read: the run goes on timing and says why, even for a name it could not check.
TEST(SessionCounters, WithoutTheHostLibraryTheRunGoesOnTimingAndSaysWhy) {
  const auto why = host_api_problem();
  if (!why) GTEST_SKIP() << "CUPTI's host API works here; this test is for machines where it cannot load";
  const SessionRun r = run_session(counted_plan(2, 13, {"memory"}, {"dram__bytes_reed.sum"}));
  ASSERT_EQ(r.result.outcome, SessionOutcome::completed) << r.result.message;
  EXPECT_TRUE(Mentions(r.result.report.run.settings.at("counters"), "not checked against GH100: " + *why));
}

TEST(SessionCounters, CountersTheWorkerCannotReadAreNotedOnceForTheWholeRunAndCasesGoOn) {
  KWB_REQUIRE_HOST_API();
  const std::string why =
      "ERR_NVGPUCTRPERM: the driver lets only admin users read GPU counters (set "
      "NVreg_RestrictProfilingToAdminUsers=0 or run as root)";
  const SessionRun r = run_session(counted_plan(5, 11, {"memory"}, {}), [&](FakeExecutor& e) {
    CaseCounters c;
    c.source = "cupti";
    c.chip = "GH100";
    c.sets = {"memory"};
    c.unavailable = why;
    e.counters_ = c;
  });
  ASSERT_EQ(r.result.outcome, SessionOutcome::completed) << r.result.message;
  ASSERT_EQ(r.result.report.cases.size(), 5u);
  for (const CaseRecord& c : r.result.report.cases) {
    EXPECT_EQ(c.disposition, Disposition::passed) << "cases go on with timing only";
    ASSERT_TRUE(c.counters);
    EXPECT_EQ(c.counters->unavailable, why);
    ASSERT_TRUE(c.derived);
    EXPECT_FALSE(c.derived->measured) << "no measured point from counters that were not read";
  }
  EXPECT_EQ(notes_mentioning(r.notes, "counters not collected"), 1) << ::testing::PrintToString(r.notes);
  EXPECT_EQ(notes_mentioning(r.notes, "NVreg_RestrictProfilingToAdminUsers=0"), 1);
}

TEST(SessionCounters, EachDistinctReasonIsNotedOnceNamingTheFirstCaseThatGaveIt) {
  KWB_REQUIRE_HOST_API();
  // Cases 0, 2, 4 hit one kind of trouble, 1 and 3 another: two notes, not one and not five.
  const SessionRun r = run_session(counted_plan(5, 12, {"memory"}, {}), [](FakeExecutor& e) {
    e.counters_for_ = [](const CaseRequest& request) {
      CaseCounters c;
      c.source = "cupti";
      c.unavailable = request.index % 2 ? "the launch ran more than 256 kernels" : "cuptiRangeProfilerSetConfig failed";
      return std::optional<CaseCounters>(c);
    };
  });
  ASSERT_EQ(r.result.outcome, SessionOutcome::completed) << r.result.message;
  EXPECT_EQ(notes_mentioning(r.notes, "counters not collected"), 2) << ::testing::PrintToString(r.notes);
  EXPECT_EQ(notes_mentioning(r.notes, "more than 256 kernels"), 1);
  EXPECT_EQ(notes_mentioning(r.notes, "SetConfig failed"), 1);
}

TEST(SessionCounters, CountersThatWereReadGiveEachCaseItsMeasuredPoint) {
  KWB_REQUIRE_HOST_API();
  const SessionRun r = run_session(counted_plan(2, 12, {"memory"}, {}), [](FakeExecutor& e) {
    CaseCounters c;
    c.source = "cupti";
    c.chip = "GH100";
    KernelCounters k;
    k.name = "rmsnorm";
    k.values = {{"gpu__time_duration.sum", 1000}, {"dram__bytes_read.sum", 3e7}, {"dram__bytes_write.sum", 1e7}};
    c.kernels = {k};
    c.total = total_over_kernels(c.kernels);
    e.counters_ = c;
  });
  ASSERT_EQ(r.result.outcome, SessionOutcome::completed) << r.result.message;
  for (const CaseRecord& c : r.result.report.cases) {
    ASSERT_TRUE(c.derived && c.derived->measured) << c.nvtx_range;
    EXPECT_EQ(c.derived->measured->dram_bytes, 4e7);
    EXPECT_DOUBLE_EQ(c.derived->measured->traffic_ratio, 4e7 / c.derived->model_bytes);
  }
  EXPECT_EQ(notes_mentioning(r.notes, "counters not collected"), 0);
}

}  // namespace
}  // namespace kwb
