// The interleaved rounds of `kwb compare --confirm` on two fake executors: the order of the sides
// (B N, N B, ...), case after case, and the early end of a case whose side is not timed.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "harness/session/interleaved_runner.hpp"

namespace kwb {
namespace {

// A side that records each call in a shared log ("B0", "N1": side and case index) and returns a
// timed record, or a failed one for the call number given.
class LoggingExecutor : public CaseExecutor {
 public:
  LoggingExecutor(std::string side, std::shared_ptr<std::vector<std::string>> log, double median_us)
      : side_(std::move(side)), log_(std::move(log)), median_us_(median_us) {}
  int fail_call = -1;  // 0-based call number that fails
  WorkerHello start() override { return {}; }
  std::optional<Ceilings> measure_ceilings(std::string*) override { return std::nullopt; }
  CaseRecord run_case(const CaseRequest& request) override {
    log_->push_back(side_ + std::to_string(request.index));
    CaseRecord rec = record_for(request);
    if (calls_++ == fail_call) {
      rec.disposition = Disposition::failed;
      rec.reason = "12 mismatches";
      return rec;
    }
    rec.disposition = Disposition::passed;
    rec.timing = TimingResult{};
    rec.timing->span.median = median_us_;
    return rec;
  }
  void abandon() override {}
  int restarts() const override { return 0; }

 private:
  std::string side_;
  std::shared_ptr<std::vector<std::string>> log_;
  double median_us_;
  int calls_ = 0;
};

std::vector<CaseRequest> two_cases() {
  std::vector<CaseRequest> cases(2);
  for (int i = 0; i < 2; ++i) {
    cases[i].index = i;
    cases[i].op = "rmsnorm_fwd";
    cases[i].variant = i == 0 ? "fused_v2_vec16" : "baseline";
  }
  return cases;
}

TEST(InterleavedRunner, AlternatesWhichSideGoesFirstRoundByRoundCaseAfterCase) {
  auto log = std::make_shared<std::vector<std::string>>();
  LoggingExecutor base("B", log, 10), next("N", log, 11);
  int calls = 0;
  const auto measured = run_interleaved(base, next, two_cases(), 3, [&](const InterleavedCase&) { ++calls; });
  const std::vector<std::string> expected = {"B0", "N0", "N0", "B0", "B0", "N0",
                                             "B1", "N1", "N1", "B1", "B1", "N1"};
  EXPECT_EQ(*log, expected);
  EXPECT_EQ(calls, 6) << "one progress call per round";
  ASSERT_EQ(measured.size(), 2u);
  for (const InterleavedCase& c : measured) {
    ASSERT_EQ(c.rounds.size(), 3u);
    EXPECT_TRUE(c.rounds[0].base_first);
    EXPECT_FALSE(c.rounds[1].base_first);
    EXPECT_DOUBLE_EQ(c.rounds[1].base.timing->span.median, 10) << "each side's record stays on its side";
    EXPECT_DOUBLE_EQ(c.rounds[1].next.timing->span.median, 11);
  }
  EXPECT_EQ(measured[1].request.variant, "baseline");
}

TEST(InterleavedRunner, ACaseEndsAfterTheRoundWhereASideWasNotTimed) {
  auto log = std::make_shared<std::vector<std::string>>();
  LoggingExecutor base("B", log, 10), next("N", log, 11);
  next.fail_call = 1;  // NEW's second call: round 2 of the first case
  const auto measured = run_interleaved(base, next, two_cases(), 4);
  ASSERT_EQ(measured[0].rounds.size(), 2u) << "no third round after NEW failed the second";
  EXPECT_EQ(measured[0].rounds[1].next.disposition, Disposition::failed);
  EXPECT_TRUE(timed_record(measured[0].rounds[1].base)) << "both sides of the broken round were measured";
  EXPECT_EQ(measured[1].rounds.size(), 4u) << "the next case still gets every round";
}

}  // namespace
}  // namespace kwb
