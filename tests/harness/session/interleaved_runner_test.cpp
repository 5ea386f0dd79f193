// The interleaved rounds of `kwb compare --confirm` on fake executors: the order of the sides
// (B N, N B, ...), case after case; the early end of a case whose side is not timed; each round's
// records judged as a session's (an impossible result fails the round); and a case that fits in
// device memory once but not beside the other side's worker, measured with that worker stopped.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/session/interleaved_runner.hpp"
#include "harness/worker/memory_skip.hpp"

namespace kwb {
namespace {

// rmsnorm_fwd 16384 x 4096 bf16: 268 MB moved, ~89 us at a 3000 GB/s DRAM roof.
const Shape kShape{{{"rows", 16384}, {"cols", 4096}}};
constexpr std::int64_t kL2 = 50 << 20;

RoundJudging h100_like() {
  RoundJudging j;
  j.ceilings.source = "measured";
  j.ceilings.dram_copy_gbps = 3000;
  j.ceilings.dram_read_gbps = 3200;
  j.ceilings.l2_copy_gbps = 6695;
  j.ceilings.fp32_tflops = 60;
  j.l2_bytes = kL2;
  return j;
}

// One GPU's memory shared by the fake workers: each holds the inputs of the case it measured last
// until it measures another or is stopped, as a real worker does.
struct FakeDevice {
  double capacity_bytes = 80e9;
  std::map<std::string, double> held;  // per side
  double held_by_others(const std::string& side) const {
    double sum = 0;
    for (const auto& [s, bytes] : held) sum += s == side ? 0 : bytes;
    return sum;
  }
};

// A side that records each call in a shared log ("B0", "N1": side and case index; "B-stop" when
// its worker is stopped) and returns a timed record, a failed one for the call number given, or
// a memory skip when the case's bytes do not fit beside what the other side holds.
class LoggingExecutor : public CaseExecutor {
 public:
  LoggingExecutor(std::string side, std::shared_ptr<std::vector<std::string>> log, double median_us,
                  std::shared_ptr<FakeDevice> device = nullptr)
      : side_(std::move(side)), log_(std::move(log)), median_us_(median_us), device_(std::move(device)) {}
  int fail_call = -1;      // 0-based call number that fails
  double case_bytes = 0;   // what a case's inputs take on the fake device
  std::map<int, double> median_by_call;  // a call's own median, else median_us
  WorkerHello start() override { return {}; }
  std::optional<Ceilings> measure_ceilings(std::string*) override { return std::nullopt; }
  CaseRecord run_case(const CaseRequest& request) override {
    log_->push_back(side_ + std::to_string(request.index));
    CaseRecord rec = record_for(request);
    const int call = calls_++;
    if (device_) {
      double& mine = device_->held[side_];
      mine = 0;  // a new case: the worker frees the last one's inputs first (make_room)
      if (case_bytes > device_->capacity_bytes - device_->held_by_others(side_)) {
        rec.disposition = Disposition::skipped;
        rec.reason = memory_skip_reason(case_bytes, static_cast<std::size_t>(device_->capacity_bytes -
                                                                            device_->held_by_others(side_)),
                                        static_cast<std::size_t>(device_->capacity_bytes));
        return rec;
      }
      mine = case_bytes;
    }
    if (call == fail_call) {
      rec.disposition = Disposition::failed;
      rec.reason = "12 mismatches";
      return rec;
    }
    rec.disposition = Disposition::passed;
    rec.timing = TimingResult{};
    rec.timing->mode = Mode::cold;
    rec.timing->span.median = median_by_call.count(call) ? median_by_call.at(call) : median_us_;
    rec.timing->span.count = 10;
    return rec;
  }
  bool release_device() override {
    log_->push_back(side_ + "-stop");
    if (device_) device_->held[side_] = 0;
    return true;
  }
  void abandon() override {}
  int restarts() const override { return 0; }

 private:
  std::string side_;
  std::shared_ptr<std::vector<std::string>> log_;
  double median_us_;
  std::shared_ptr<FakeDevice> device_;
  int calls_ = 0;
};

std::vector<CaseRequest> two_cases() {
  std::vector<CaseRequest> cases(2);
  for (int i = 0; i < 2; ++i) {
    cases[i].index = i;
    cases[i].op = "rmsnorm_fwd";
    cases[i].variant = i == 0 ? "fused_v2_vec16" : "baseline_eager_8_launches";
    cases[i].dtype = DType::bf16;
    cases[i].shape = kShape;
  }
  return cases;
}

TEST(InterleavedRunner, AlternatesWhichSideGoesFirstRoundByRoundCaseAfterCase) {
  auto log = std::make_shared<std::vector<std::string>>();
  LoggingExecutor base("B", log, 100), next("N", log, 110);
  int calls = 0;
  const auto measured =
      run_interleaved(base, next, two_cases(), 3, h100_like(), [&](const InterleavedCase&) { ++calls; });
  const std::vector<std::string> expected = {"B0", "N0", "N0", "B0", "B0", "N0",
                                             "B1", "N1", "N1", "B1", "B1", "N1"};
  EXPECT_EQ(*log, expected) << "no worker is stopped when the cases fit";
  EXPECT_EQ(calls, 6) << "one progress call per round";
  ASSERT_EQ(measured.size(), 2u);
  for (const InterleavedCase& c : measured) {
    ASSERT_EQ(c.rounds.size(), 3u);
    EXPECT_TRUE(c.rounds[0].base_first);
    EXPECT_FALSE(c.rounds[1].base_first);
    EXPECT_FALSE(c.sides_alone);
    EXPECT_DOUBLE_EQ(c.rounds[1].base.timing->span.median, 100) << "each side's record stays on its side";
    EXPECT_DOUBLE_EQ(c.rounds[1].next.timing->span.median, 110);
  }
  EXPECT_EQ(measured[1].request.variant, "baseline_eager_8_launches");
}

TEST(InterleavedRunner, ACaseEndsAfterTheRoundWhereASideWasNotTimed) {
  auto log = std::make_shared<std::vector<std::string>>();
  LoggingExecutor base("B", log, 100), next("N", log, 110);
  next.fail_call = 1;  // NEW's second call: round 2 of the first case
  const auto measured = run_interleaved(base, next, two_cases(), 4, h100_like());
  ASSERT_EQ(measured[0].rounds.size(), 2u) << "no third round after NEW failed the second";
  EXPECT_EQ(measured[0].rounds[1].next.disposition, Disposition::failed);
  EXPECT_TRUE(timed_record(measured[0].rounds[1].base)) << "both sides of the broken round were measured";
  EXPECT_EQ(measured[1].rounds.size(), 4u) << "the next case still gets every round";
}

TEST(InterleavedRunner, EachRoundIsDerivedAndJudgedAsASessionsCase) {
  // 1. NEW's second call reads 2 us: 134 TB/s, thousands of % of the DRAM roof (a timer cheat).
  auto log = std::make_shared<std::vector<std::string>>();
  LoggingExecutor base("B", log, 100), next("N", log, 110);
  next.median_by_call[1] = 2.0;
  const auto measured = run_interleaved(base, next, two_cases(), 4, h100_like());
  // 2. Every record carries its figures against the ceilings given.
  const InterleavedRound& first = measured[0].rounds[0];
  ASSERT_TRUE(first.base.derived.has_value());
  EXPECT_NEAR(first.base.derived->bandwidth_gbps, 268443648.0 / 100 / 1e3, 1e-6);
  EXPECT_GT(first.base.derived->pct_of_bandwidth_ceiling, 80);
  EXPECT_EQ(first.base.role, Role::fused) << "labelled from the registry, as a session's records are";
  EXPECT_FALSE(first.base.repro.empty());
  // 3. The impossible round failed on the roof rule, its timing kept, and it ends the case: it is
  //    no evidence.
  ASSERT_EQ(measured[0].rounds.size(), 2u);
  const CaseRecord& cheat = measured[0].rounds[1].next;
  EXPECT_EQ(cheat.disposition, Disposition::failed);
  EXPECT_NE(cheat.reason.find("above its roof"), std::string::npos) << cheat.reason;
  EXPECT_NE(cheat.reason.find("DRAM roof"), std::string::npos) << cheat.reason;
  ASSERT_TRUE(cheat.timing.has_value());
  EXPECT_FALSE(timed_record(cheat));
  EXPECT_EQ(measured[1].rounds.size(), 4u);
}

TEST(InterleavedRunner, ACaseThatFitsOnceButNotTwiceIsMeasuredWithTheOtherWorkerStopped) {
  // 1. An 80 GB GPU and a case whose inputs take 50 GB: one worker holds them, the other cannot.
  auto log = std::make_shared<std::vector<std::string>>();
  auto device = std::make_shared<FakeDevice>();
  LoggingExecutor base("B", log, 100, device), next("N", log, 110, device);
  base.case_bytes = next.case_bytes = 50e9;
  std::vector<CaseRequest> cases = two_cases();
  cases.resize(1);
  const auto measured = run_interleaved(base, next, cases, 4, h100_like());
  // 2. NEW was skipped beside BASE's worker in round 1, so BASE's was stopped and NEW measured
  //    again; from then on each side's turn stops the other's worker first.
  const std::vector<std::string> expected = {"B0", "N0", "B-stop", "N0",            // round 1: B N
                                             "B-stop", "N0", "N-stop", "B0",        // round 2: N B
                                             "N-stop", "B0", "B-stop", "N0",        // round 3: B N
                                             "B-stop", "N0", "N-stop", "B0"};       // round 4: N B
  EXPECT_EQ(*log, expected);
  // 3. Every round timed on both sides: the case is confirmed, not left ambiguous by a skip.
  ASSERT_EQ(measured[0].rounds.size(), 4u);
  EXPECT_TRUE(measured[0].sides_alone);
  for (const InterleavedRound& r : measured[0].rounds) {
    EXPECT_TRUE(timed_record(r.base)) << r.base.reason;
    EXPECT_TRUE(timed_record(r.next)) << r.next.reason;
  }
}

TEST(InterleavedRunner, ACaseThatDoesNotFitAloneStaysSkipped) {
  auto log = std::make_shared<std::vector<std::string>>();
  auto device = std::make_shared<FakeDevice>();
  LoggingExecutor base("B", log, 100, device), next("N", log, 110, device);
  base.case_bytes = next.case_bytes = 90e9;  // more than the GPU holds
  std::vector<CaseRequest> cases = two_cases();
  cases.resize(1);
  const auto measured = run_interleaved(base, next, cases, 4, h100_like());
  ASSERT_EQ(measured[0].rounds.size(), 1u) << "a skip that repeats alone ends the case";
  EXPECT_TRUE(skipped_for_memory(measured[0].rounds[0].base)) << measured[0].rounds[0].base.reason;
  EXPECT_TRUE(skipped_for_memory(measured[0].rounds[0].next)) << measured[0].rounds[0].next.reason;
  const std::vector<std::string> expected = {"B0", "N-stop", "B0", "B-stop", "N0"};
  EXPECT_EQ(*log, expected) << "one second try alone per side, no more";
}

TEST(InterleavedRunner, AnExecutorThatCannotStopItsWorkerKeepsTheSkip) {
  // The default CaseExecutor cannot release the device: the skip is not retried.
  class Holding : public LoggingExecutor {
   public:
    using LoggingExecutor::LoggingExecutor;
    bool release_device() override { return false; }
  };
  auto log = std::make_shared<std::vector<std::string>>();
  auto device = std::make_shared<FakeDevice>();
  Holding base("B", log, 100, device), next("N", log, 110, device);
  base.case_bytes = next.case_bytes = 50e9;
  std::vector<CaseRequest> cases = two_cases();
  cases.resize(1);
  const auto measured = run_interleaved(base, next, cases, 4, h100_like());
  ASSERT_EQ(measured[0].rounds.size(), 1u);
  EXPECT_TRUE(skipped_for_memory(measured[0].rounds[0].next));
  EXPECT_FALSE(measured[0].sides_alone);
}

}  // namespace
}  // namespace kwb
