// A Session resumed from the journal of an interrupted one measures only the cases not recorded,
// appends them to the same journal, writes the report of every case in plan order, and refuses
// another GPU (with a fake executor: no GPU needed).
#include <gtest/gtest.h>

#include "harness/plan/planner.hpp"
#include "harness/session/resume_plan.hpp"
#include "harness/session/session.hpp"
#include "harness/record/json_report.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

// Passes every case at once; remembers which it ran.
class CountingExecutor : public CaseExecutor {
 public:
  explicit CountingExecutor(std::vector<int>* ran, std::string uuid = "GPU-fake") : ran_(ran) {
    hello_.has_gpu = true;
    hello_.device_count = 1;
    hello_.device.name = "Fake GPU";
    hello_.device.uuid = std::move(uuid);
    hello_.device.global_mem_bytes = std::int64_t(80) << 30;
    hello_.device.l2_bytes = 50 << 20;
    hello_.timer = "events";
  }
  WorkerHello start() override { return hello_; }
  std::optional<Ceilings> measure_ceilings(std::string*) override { return std::nullopt; }
  CaseRecord run_case(const CaseRequest& request) override {
    ran_->push_back(request.index);
    CaseRecord rec = record_for(request);
    rec.disposition = Disposition::passed;
    rec.timing = TimingResult{};
    rec.timing->span.median = 100 + request.index;
    rec.timing->span.count = 10;
    return rec;
  }
  void abandon() override {}
  int restarts() const override { return 0; }

 private:
  WorkerHello hello_;
  std::vector<int>* ran_;
};

std::vector<CaseRequest> plan_of_six() {
  PlanRequest req;
  req.ops = {"rmsnorm_fwd"};
  req.variants = {"fused_v2_vec16"};
  req.dtypes = {DType::bf16};
  req.axes = {parse_axis_assignment("rows=1,2,3,5,8,13"), parse_axis_assignment("cols=4096")};
  return plan_cases(req, Registry::instance());
}

SessionOptions options_in(const std::filesystem::path& out) {
  SessionOptions o;
  o.ceilings = CeilingsChoice::datasheet;
  o.out = out;
  o.plan_flags = {{"op", {"rmsnorm_fwd"}}};
  return o;
}

// Runs the plan, cancelled after `stop_after` cases; then the resume options from its journal.
SessionOptions::Resume interrupted_run(const std::filesystem::path& out, std::size_t stop_after,
                                       std::vector<std::string>* plan_ids) {
  const auto cases = plan_of_six();
  std::vector<int> ran;
  Session* self = nullptr;
  SessionCallbacks cb;
  cb.on_record = [&](const CaseRecord&, const SessionProgress& p) {
    if (p.done == stop_after) self->cancel(CancelMode::finish_current);
  };
  Session first(cases, options_in(out), std::make_unique<CountingExecutor>(&ran), cb);
  self = &first;
  EXPECT_EQ(first.run().outcome, SessionOutcome::cancelled);
  EXPECT_EQ(ran.size(), stop_after);
  for (const auto& c : cases) plan_ids->push_back(case_identity(c));
  const JournalContents journal = read_journal_contents(out / "journal.jsonl");
  const ResumePlan plan = plan_resume(journal, "journal", nlohmann::ordered_json::object(), *plan_ids);
  EXPECT_EQ(plan.recorded.size(), stop_after);
  return {*journal.header, plan.recorded};
}

TEST(SessionResume, MeasuresOnlyTheRestAndReportsEveryCaseInPlanOrder) {
  test::TempDir dir;
  std::vector<std::string> plan_ids;
  SessionOptions o = options_in(dir / "out");
  o.resume = interrupted_run(dir / "out", 2, &plan_ids);
  std::vector<int> ran;
  Session resumed(plan_of_six(), o, std::make_unique<CountingExecutor>(&ran));
  EXPECT_EQ(resumed.progress().total, 4u);
  const SessionResult result = resumed.run();
  ASSERT_EQ(result.outcome, SessionOutcome::completed) << result.message;
  EXPECT_EQ(ran, (std::vector<int>{2, 3, 4, 5}));
  const Report report = read_report_json(dir / "out" / "report.json");
  EXPECT_TRUE(report.run.complete);
  std::vector<std::string> reported;
  for (const auto& r : report.cases) reported.push_back(record_identity(r));
  EXPECT_EQ(reported, plan_ids);
  const JournalContents journal = read_journal_contents(dir / "out" / "journal.jsonl");
  EXPECT_EQ(journal.records.size(), 6u) << "appended to, not started afresh";
  EXPECT_TRUE(plan_resume(journal, "j", nlohmann::ordered_json::object(), plan_ids).remaining.empty());
}

TEST(SessionResume, AnotherGpuIsRefusedBeforeAnyCase) {
  test::TempDir dir;
  std::vector<std::string> plan_ids;
  SessionOptions o = options_in(dir / "out");
  o.resume = interrupted_run(dir / "out", 3, &plan_ids);
  std::vector<int> ran;
  Session resumed(plan_of_six(), o, std::make_unique<CountingExecutor>(&ran, "GPU-other"));
  const SessionResult result = resumed.run();
  EXPECT_EQ(result.outcome, SessionOutcome::bad_input);
  EXPECT_NE(result.message.find("GPU-other"), std::string::npos) << result.message;
  EXPECT_TRUE(ran.empty());
}

}  // namespace
}  // namespace kwb
