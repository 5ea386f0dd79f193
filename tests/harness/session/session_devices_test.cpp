// A Session spread over several GPUs (`kwb run --devices`): every case runs once on one of them,
// a GPU that finishes early takes more, the report is in plan order and says which GPU measured
// each case, `all` expands to every GPU the first worker sees, and GPUs that are missing or of
// another kind are refused before any case runs. Fake executors stand in for the workers.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "harness/plan/planner.hpp"
#include "harness/session/session.hpp"
#include "harness/record/journal_reader.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

using namespace std::chrono_literals;

// What every fake GPU saw, shared by the test and the executors (which the session owns).
struct Bench {
  std::mutex mutex;
  std::map<int, std::vector<int>> ran;  // device -> case indices, in the order it ran them
  std::vector<int> made;                // devices the factory was asked for
  int device_count = 2;
  std::map<int, std::string> names;     // device -> name when not "Fake H100"
  std::map<int, std::chrono::milliseconds> delay;  // device -> time per case (default 2 ms)
  std::atomic<bool> abandoned{false};
  // device -> (cases it had run when told, first case of the group it was told comes next)
  std::map<int, std::vector<std::pair<std::size_t, int>>> hints;
};

class FakeGpu : public CaseExecutor {
 public:
  FakeGpu(Bench& bench, int device) : bench_(bench), device_(device) {}
  WorkerHello start() override {
    WorkerHello h;
    h.has_gpu = true;
    h.device_count = bench_.device_count;
    h.device.index = device_;
    h.device.name = bench_.names.contains(device_) ? bench_.names[device_] : "Fake H100";
    h.device.uuid = "GPU-fake-" + std::to_string(device_);
    h.device.global_mem_bytes = std::int64_t(80) << 30;
    h.device.l2_bytes = 50 << 20;
    h.timer = "cupti";
    return h;
  }
  std::optional<Ceilings> measure_ceilings(std::string*) override { return std::nullopt; }
  CaseRecord run_case(const CaseRequest& request) override {
    const auto delay = bench_.delay.contains(device_) ? bench_.delay.at(device_) : 2ms;
    for (auto waited = 0ms; waited < delay && !bench_.abandoned; waited += 1ms) std::this_thread::sleep_for(1ms);
    {
      std::lock_guard lock(bench_.mutex);
      bench_.ran[device_].push_back(request.index);
    }
    CaseRecord rec = record_for(request);
    rec.disposition = Disposition::passed;
    rec.timing = TimingResult{};
    rec.timing->span.median = 50 + request.index;
    rec.timing->span.count = 10;
    return rec;
  }
  void expect_next_group(const CaseRequest& first_case) override {
    std::lock_guard lock(bench_.mutex);
    bench_.hints[device_].push_back({bench_.ran[device_].size(), first_case.index});
  }
  void abandon() override { bench_.abandoned = true; }
  int restarts() const override { return 0; }

 private:
  Bench& bench_;
  int device_;
};

ExecutorFactory factory_of(Bench& bench) {
  return [&bench](int device) -> std::unique_ptr<CaseExecutor> {
    std::lock_guard lock(bench.mutex);
    bench.made.push_back(device);
    return std::make_unique<FakeGpu>(bench, device);
  };
}

// `n` rmsnorm cases at seeded random row counts.
std::vector<CaseRequest> rmsnorm_plan_of(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::set<std::int64_t> rows;
  while (rows.size() < n) rows.insert(std::uniform_int_distribution<std::int64_t>(1, 100000)(rng));
  std::string list;
  for (auto r : rows) list += (list.empty() ? "" : ",") + std::to_string(r);
  PlanRequest req;
  req.ops = {"rmsnorm_fwd"};
  req.variants = {"fused_v2_vec16"};
  req.dtypes = {DType::bf16};
  req.axes = {parse_axis_assignment("rows=" + list), parse_axis_assignment("cols=4096")};
  req.seed = seed;
  return plan_cases(req, Registry::instance());
}

SessionOptions on_devices(std::vector<int> devices) {
  SessionOptions o;
  o.ceilings = CeilingsChoice::datasheet;
  o.devices = std::move(devices);
  return o;
}

TEST(SessionDevices, EveryCaseRunsOnceOnSomeGpuAndTheReportIsInPlanOrder) {
  Bench bench;
  bench.device_count = 3;
  const auto cases = rmsnorm_plan_of(24, 5);
  test::TempDir dir;
  SessionOptions options = on_devices({2, 0, 1});
  options.out = dir.path();
  std::vector<int> delivered, started;
  std::size_t last_done = 0;
  std::atomic<int> inside{0};  // callbacks running now: a second one at once is a race
  SessionCallbacks callbacks;
  callbacks.on_started = [&](const CaseRequest& c, const SessionProgress& p) {  // never concurrent
    EXPECT_EQ(inside.fetch_add(1), 0) << "a start announced while another callback ran";
    started.push_back(c.index);
    EXPECT_NE(p.current.find(c.shape.to_compact()), std::string::npos) << p.current;
    std::this_thread::sleep_for(std::chrono::microseconds(200));  // room for another lane to collide
    inside.fetch_sub(1);
  };
  callbacks.on_record = [&](const CaseRecord& r, const SessionProgress& p) {  // never concurrent
    EXPECT_EQ(inside.fetch_add(1), 0) << "a record delivered while another callback ran";
    delivered.push_back(r.index);
    EXPECT_EQ(p.done, last_done + 1);
    last_done = p.done;
    inside.fetch_sub(1);
  };
  Session session(cases, options, factory_of(bench), callbacks);
  const SessionResult result = session.run();
  ASSERT_EQ(result.outcome, SessionOutcome::completed) << result.message;

  EXPECT_EQ(bench.made, (std::vector<int>{2, 0, 1})) << "one executor per GPU, the first given first";
  std::multiset<int> ran;
  for (const auto& [device, indices] : bench.ran) {
    EXPECT_FALSE(indices.empty()) << "GPU " << device << " ran nothing";
    ran.insert(indices.begin(), indices.end());
  }
  std::multiset<int> planned;
  for (const auto& c : cases) planned.insert(c.index);
  EXPECT_EQ(ran, planned) << "each case exactly once";
  EXPECT_EQ(std::multiset<int>(delivered.begin(), delivered.end()), planned);
  EXPECT_EQ(std::multiset<int>(started.begin(), started.end()), planned) << "each case announced once";

  ASSERT_EQ(result.report.cases.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const CaseRecord& r = result.report.cases[i];
    EXPECT_EQ(r.index, cases[i].index) << "plan order";
    ASSERT_TRUE(r.device.has_value());
    const auto& on = bench.ran.at(*r.device);
    EXPECT_NE(std::find(on.begin(), on.end(), r.index), on.end()) << "the record names the GPU that ran it";
  }
  ASSERT_EQ(result.report.run.devices.size(), 3u);
  EXPECT_EQ(result.report.run.devices[0].index, 2);
  EXPECT_EQ(result.report.run.device->uuid, "GPU-fake-2") << "the first GPU given is the run's device";

  const JournalContents journal = read_journal_contents(dir.path() / "journal.jsonl");
  EXPECT_EQ(journal.records.size(), cases.size()) << "every record journaled once";
  EXPECT_TRUE(journal.header.has_value());
}

TEST(SessionDevices, AGpuThatFinishesEarlyTakesMoreCases) {
  Bench bench;
  bench.delay[0] = 60ms;
  bench.delay[1] = 2ms;
  const auto cases = rmsnorm_plan_of(30, 9);
  Session session(cases, on_devices({0, 1}), factory_of(bench));
  ASSERT_EQ(session.run().outcome, SessionOutcome::completed);
  const auto slow = bench.ran[0].size(), fast = bench.ran[1].size();
  EXPECT_EQ(slow + fast, cases.size());
  EXPECT_GT(fast, 3 * slow) << "the cases are handed out as GPUs free up, not split in halves";
}

TEST(SessionDevices, CasesThatShareInputsStayOnOneGpuAndTheLargestGroupGoesFirst) {
  Bench bench;
  bench.delay[0] = bench.delay[1] = 20ms;  // a group lasts long enough for the other lane to start
  PlanRequest req;  // 3 variants x 5 shapes: 5 groups of 3 cases that share inputs and oracle
  req.ops = {"rmsnorm_fwd"};
  req.variants = {"fused_v2_vec16", "fused_v3_vec16_any_cols", "fused_v4_rows_per_block"};
  req.dtypes = {DType::bf16};
  req.axes = {parse_axis_assignment("rows=64,4096,16,1024,256"), parse_axis_assignment("cols=4096")};
  const auto cases = plan_cases(req, Registry::instance());
  ASSERT_EQ(cases.size(), 15u);
  Session session(cases, on_devices({0, 1}), factory_of(bench));
  const SessionResult result = session.run();
  ASSERT_EQ(result.outcome, SessionOutcome::completed) << result.message;
  std::map<std::string, std::set<int>> gpus_of_shape;
  for (const auto& r : result.report.cases) gpus_of_shape[r.shape.to_compact()].insert(*r.device);
  ASSERT_EQ(gpus_of_shape.size(), 5u);
  for (const auto& [shape, gpus] : gpus_of_shape) EXPECT_EQ(gpus.size(), 1u) << shape << " was split between GPUs";
  // The first case a GPU ran is of the largest group (4096 rows), on one of the two.
  const int first0 = bench.ran[0].front(), first1 = bench.ran[1].front();
  const auto rows_of = [&](int index) { return cases[static_cast<std::size_t>(index)].shape.at("rows"); };
  EXPECT_EQ(std::max(rows_of(first0), rows_of(first1)), 4096);
  EXPECT_EQ(std::min(rows_of(first0), rows_of(first1)), 1024) << "the next largest goes to the other GPU";
}

// Every GPU's executor hears which group it runs next, before the group it runs now is over: at
// the group's start when one GPU runs them all (the whole group's timing hides the next oracle),
// at the start of its last case beside other GPUs (so a group still goes to the GPU that frees up
// first). The hint always names the group that GPU then ran.
TEST(SessionDevices, EachGpuIsToldTheGroupItRunsNextBeforeItsCurrentGroupEnds) {
  PlanRequest req;  // 3 variants x 6 shapes: 6 groups of 3 cases
  req.ops = {"rmsnorm_fwd"};
  req.variants = {"fused_v2_vec16", "fused_v3_vec16_any_cols", "fused_v4_rows_per_block"};
  req.dtypes = {DType::bf16};
  req.axes = {parse_axis_assignment("rows=64,4096,16,1024,256,32"), parse_axis_assignment("cols=4096")};
  const auto cases = plan_cases(req, Registry::instance());
  ASSERT_EQ(cases.size(), 18u);
  for (const std::vector<int>& devices : {std::vector<int>{0}, std::vector<int>{0, 1}}) {
    Bench bench;
    Session session(cases, on_devices(devices), factory_of(bench));
    ASSERT_EQ(session.run().outcome, SessionOutcome::completed);
    for (const auto& [device, ran] : bench.ran) {
      ASSERT_EQ(ran.size() % 3, 0u) << "groups stay whole on a GPU";
      const std::size_t groups = ran.size() / 3;
      const auto& hints = bench.hints[device];
      ASSERT_EQ(hints.size(), groups - 1) << "one hint for every group but the GPU's first";
      for (std::size_t k = 0; k < hints.size(); ++k) {
        const std::size_t told_after = devices.size() == 1 ? 3 * k : 3 * k + 2;
        EXPECT_EQ(hints[k].first, told_after) << devices.size() << " GPU(s), hint " << k;
        EXPECT_EQ(hints[k].second, ran[3 * (k + 1)]) << "the hint names the group this GPU ran next";
      }
    }
  }
}

TEST(SessionDevices, AllMeansEveryGpuTheFirstWorkerSees) {
  Bench bench;
  bench.device_count = 4;
  SessionOptions options;
  options.ceilings = CeilingsChoice::datasheet;
  options.all_devices = true;
  Session session(rmsnorm_plan_of(8, 3), options, factory_of(bench));
  const SessionResult result = session.run();
  ASSERT_EQ(result.outcome, SessionOutcome::completed) << result.message;
  EXPECT_EQ(bench.made, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(result.report.run.devices.size(), 4u);
}

TEST(SessionDevices, AMissingGpuOrAnotherKindIsRefusedBeforeAnyCase) {
  {
    Bench bench;
    bench.device_count = 2;
    Session session(rmsnorm_plan_of(4, 1), on_devices({0, 5}), factory_of(bench));
    const SessionResult result = session.run();
    EXPECT_EQ(result.outcome, SessionOutcome::bad_input);
    EXPECT_NE(result.message.find("--devices: device 5 does not exist; this machine has 2"), std::string::npos)
        << result.message;
    EXPECT_TRUE(bench.ran.empty());
  }
  {
    Bench bench;
    bench.names[1] = "Fake A100";
    Session session(rmsnorm_plan_of(4, 1), on_devices({0, 1}), factory_of(bench));
    const SessionResult result = session.run();
    EXPECT_EQ(result.outcome, SessionOutcome::bad_input);
    EXPECT_NE(result.message.find("GPU 0 is Fake H100 but GPU 1 is Fake A100"), std::string::npos) << result.message;
    EXPECT_TRUE(bench.ran.empty());
  }
  {
    Bench bench;
    Session session(rmsnorm_plan_of(4, 1), on_devices({1, 1}), factory_of(bench));
    const SessionResult result = session.run();
    EXPECT_EQ(result.outcome, SessionOutcome::bad_input);
    EXPECT_NE(result.message.find("GPU 1 is given twice"), std::string::npos) << result.message;
  }
}

TEST(SessionDevices, APlanMadeForAnotherGpuIsRefusedBeforeAnyCase) {
  Bench bench;
  SessionOptions options = on_devices({0});
  options.required_devices = {{"--tuning t.json", "Fake H200"}};
  Session session(rmsnorm_plan_of(3, 2), options, factory_of(bench));
  const SessionResult result = session.run();
  EXPECT_EQ(result.outcome, SessionOutcome::bad_input);
  EXPECT_NE(result.message.find("--tuning t.json: tuned on Fake H200, but this GPU is Fake H100"), std::string::npos)
      << result.message;
  EXPECT_TRUE(bench.ran.empty());
  options.required_devices = {{"--tuning t.json", "Fake H100"}};
  Session same(rmsnorm_plan_of(3, 2), options, factory_of(bench));
  EXPECT_EQ(same.run().outcome, SessionOutcome::completed);
}

TEST(SessionDevices, AbandonStopsEveryGpuAndKeepsWhatFinished) {
  Bench bench;
  bench.delay[0] = 30ms;
  bench.delay[1] = 30ms;
  const auto cases = rmsnorm_plan_of(40, 13);
  Session session(cases, on_devices({0, 1}), factory_of(bench));
  session.start();
  while (session.progress().done < 4) std::this_thread::sleep_for(1ms);
  session.cancel(CancelMode::abandon_current);
  const SessionResult result = session.wait();
  EXPECT_EQ(result.outcome, SessionOutcome::cancelled);
  EXPECT_FALSE(result.report.run.complete);
  EXPECT_LT(result.report.cases.size(), cases.size());
  EXPECT_GE(result.report.cases.size(), 4u);
  for (std::size_t i = 1; i < result.report.cases.size(); ++i)
    EXPECT_LT(result.report.cases[i - 1].index, result.report.cases[i].index) << "plan order";
}

}  // namespace
}  // namespace kwb
