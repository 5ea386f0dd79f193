// The confirmed verdict from interleaved rounds on seeded synthetic timings: an A/A pair whose
// rounds drift together is the same, a 5% slowdown is slower, rounds that disagree are ambiguous,
// and a side that fails or skips when measured again decides what the case becomes.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "reports/compare/compare_markdown.hpp"
#include "reports/compare/compare_text.hpp"
#include "reports/compare/junit_xml.hpp"
#include "reports/compare/confirm_decision.hpp"
#include "tests/reports/compare/compare_test_support.hpp"

namespace kwb {
namespace confirm_decision_test {
namespace {

using test::noisy_samples;
using test::scaled;

CaseRecord timed(const std::vector<double>& samples) {
  CaseRecord r = test::timed_case("rmsnorm_fwd", "fused_v2_vec16", 4096, samples);
  return r;
}

// `rounds` rounds of a 40 us kernel with 1% noise per sample; NEW is `factor` x BASE, and every
// round moves both sides by a common drift drawn from +-`drift` (clocks, temperature).
std::vector<InterleavedRound> rounds_of(std::uint64_t seed, int rounds, double factor, double drift) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> shift(-drift, drift);
  std::vector<InterleavedRound> out;
  for (int r = 0; r < rounds; ++r) {
    const double common = 1 + shift(rng);
    InterleavedRound round;
    round.base_first = r % 2 == 0;
    round.base = timed(scaled(noisy_samples(seed * 100 + 2 * r, 40, 40.0, 0.01), common));
    round.next = timed(scaled(noisy_samples(seed * 100 + 2 * r + 1, 40, 40.0, 0.01), common * factor));
    out.push_back(std::move(round));
  }
  return out;
}

std::string describe(const Decision& d) { return std::string(to_string(d.verdict)) + ": " + d.reason; }

TEST(ConfirmDecision, AaRoundsThatDriftTogetherAreSame) {
  // A 10% drift between rounds, far beyond the 3% threshold, moves both sides of each round.
  for (std::uint64_t seed : {1, 2, 3, 4, 5}) {
    const Decision d = decide_rounds(rounds_of(seed, 6, 1.0, 0.10), DecisionSettings{});
    EXPECT_EQ(d.verdict, Verdict::same) << "seed " << seed << ": " << describe(d);
    EXPECT_GT(d.ratio.lo, 0.98);
    EXPECT_LT(d.ratio.hi, 1.02);
  }
}

TEST(ConfirmDecision, FivePercentSlowerIsSlowerAndFasterTheOtherWay) {
  const Decision slower = decide_rounds(rounds_of(7, 6, 1.05, 0.10), DecisionSettings{});
  EXPECT_EQ(slower.verdict, Verdict::slower) << describe(slower);
  EXPECT_NEAR(slower.ratio.ratio, 1.05, 0.01);
  EXPECT_GT(slower.ratio.lo, 1.03);
  EXPECT_LT(slower.p_value, 1e-4);
  EXPECT_NE(slower.reason.find("paired t test"), std::string::npos) << slower.reason;
  const Decision faster = decide_rounds(rounds_of(8, 6, 0.95, 0.10), DecisionSettings{});
  EXPECT_EQ(faster.verdict, Verdict::faster) << describe(faster);
}

TEST(ConfirmDecision, IntervalIsTheStudentTIntervalOfTheRoundsLogRatios) {
  // Rounds whose medians give the ratios 1.00, 1.02, 1.04 exactly (one sample per side).
  std::vector<InterleavedRound> rounds;
  for (double ratio : {1.00, 1.02, 1.04}) {
    InterleavedRound r;
    r.base = timed({100.0});
    r.next = timed({100.0 * ratio});
    rounds.push_back(r);
  }
  const Decision d = decide_rounds(rounds, DecisionSettings{});
  const double l[3] = {0, std::log(1.02), std::log(1.04)};
  const double mean = (l[0] + l[1] + l[2]) / 3;
  double ss = 0;
  for (double x : l) ss += (x - mean) * (x - mean);
  const double half = 4.302653 * std::sqrt(ss / 2 / 3);  // t(0.975, 2 df)
  EXPECT_NEAR(d.ratio.ratio, std::exp(mean), 1e-9);
  EXPECT_NEAR(d.ratio.lo, std::exp(mean - half), 1e-5);
  EXPECT_NEAR(d.ratio.hi, std::exp(mean + half), 1e-5);
  EXPECT_EQ(d.verdict, Verdict::ambiguous) << "three rounds this far apart cannot tell: " << describe(d);
}

TEST(ConfirmDecision, RoundsThatDisagreeAreAmbiguous) {
  auto rounds = rounds_of(9, 6, 1.0, 0.0);
  for (std::size_t i = 1; i < rounds.size(); i += 2)
    rounds[i].next = timed(scaled(rounds[i].next.timing->samples_us, 1.08));  // every other round 8% slower
  const Decision d = decide_rounds(rounds, DecisionSettings{});
  EXPECT_EQ(d.verdict, Verdict::ambiguous) << describe(d);
  EXPECT_NE(d.reason.find("cannot tell"), std::string::npos) << d.reason;
}

TEST(ConfirmDecision, FewerThanThreeTimedRoundsAreAmbiguous) {
  const Decision d = decide_rounds(rounds_of(10, 2, 1.2, 0.0), DecisionSettings{});
  EXPECT_EQ(d.verdict, Verdict::ambiguous);
  EXPECT_NE(d.reason.find("only 2 rounds"), std::string::npos) << d.reason;
}

TEST(ConfirmDecision, AShortKernelsBandWidensToTheMinimumEffect) {
  // 2 us kernels, 5% slower: 0.1 us, under the 0.5 us minimum effect (a 25% band here).
  auto rounds = rounds_of(11, 6, 1.05, 0.0);
  for (InterleavedRound& r : rounds) {
    r.base = timed(scaled(r.base.timing->samples_us, 0.05));
    r.next = timed(scaled(r.next.timing->samples_us, 0.05));
  }
  const Decision d = decide_rounds(rounds, DecisionSettings{});
  EXPECT_EQ(d.verdict, Verdict::same) << describe(d);
  EXPECT_NEAR(d.tolerance, 0.25, 0.01);
}

ComparedCase suspect(CaseOutcome outcome) {
  ComparedCase c;
  c.key = "rmsnorm_fwd:fused_v2_vec16:bf16:4096x4096";
  c.op = "rmsnorm_fwd";
  c.outcome = outcome;
  c.throttled = outcome == CaseOutcome::ambiguous;
  c.threshold = 0.03;
  c.decision.ratio = {1.048, 1.046, 1.049};
  c.decision.p_value = 5e-97;
  c.note = "throttled: NEW had 40 of 100 samples throttled";
  return c;
}

TEST(ConfirmDecision, ConfirmedVerdictReplacesTheFirstAndKeepsIt) {
  ComparedCase c = suspect(CaseOutcome::ambiguous);
  apply_confirmation(c, InterleavedCase{{}, rounds_of(12, 6, 1.0, 0.05)}, DecisionSettings{});
  EXPECT_EQ(c.outcome, CaseOutcome::same) << c.note;
  EXPECT_EQ(c.outcome_label(), "same (confirmed)");
  EXPECT_FALSE(c.throttled);
  EXPECT_EQ(c.confirm_rounds, 6);
  ASSERT_TRUE(c.first.has_value());
  EXPECT_EQ(c.first->outcome, CaseOutcome::ambiguous);
  EXPECT_TRUE(c.first->throttled);
  EXPECT_DOUBLE_EQ(c.first->decision.ratio.ratio, 1.048);
  EXPECT_DOUBLE_EQ(c.reports_ratio(), 1.048) << "the summaries keep averaging the reports' ratios";
  EXPECT_NE(c.note.find("confirmed: "), std::string::npos) << c.note;
  const std::string first = first_verdict_text(c);
  EXPECT_NE(first.find("ambiguous (throttled), ratio 1.048 [1.046, 1.049]"), std::string::npos) << first;
}

TEST(ConfirmDecision, UsesTheCasesOwnThreshold) {
  ComparedCase c = suspect(CaseOutcome::slower);
  c.threshold = 0.01;  // --threshold 1%: a 2% slowdown must be caught
  DecisionSettings s;
  s.min_effect_us = 0.2;  // at 40 us the default 0.5 us would be a 1.25% band
  apply_confirmation(c, InterleavedCase{{}, rounds_of(13, 6, 1.02, 0.05)}, s);
  EXPECT_EQ(c.outcome, CaseOutcome::slower) << c.note;
  EXPECT_DOUBLE_EQ(c.decision.tolerance, 0.01);
}

TEST(ConfirmDecision, NewFailingWhenMeasuredAgainIsAFailure) {
  ComparedCase c = suspect(CaseOutcome::slower);
  auto rounds = rounds_of(14, 3, 1.0, 0.0);
  rounds[2].next.disposition = Disposition::failed;
  rounds[2].next.timing.reset();
  rounds[2].next.reason = "timed launches do not reproduce the verified output";
  apply_confirmation(c, InterleavedCase{{}, rounds}, DecisionSettings{});
  EXPECT_EQ(c.outcome, CaseOutcome::failed);
  EXPECT_NE(c.note.find("failed in NEW when re-measured (round 3"), std::string::npos) << c.note;
  EXPECT_NE(c.note.find("do not reproduce"), std::string::npos) << c.note;
}

TEST(ConfirmDecision, BaseFailingOrASkipLeavesItAmbiguousWithTheReason) {
  for (const Disposition d : {Disposition::failed, Disposition::skipped}) {
    ComparedCase c = suspect(CaseOutcome::slower);
    auto rounds = rounds_of(15, 1, 1.0, 0.0);
    rounds[0].base.disposition = d;
    rounds[0].base.timing.reset();
    rounds[0].base.reason = "needs 9.00 GiB of device memory";
    apply_confirmation(c, InterleavedCase{{}, rounds}, DecisionSettings{});
    EXPECT_EQ(c.outcome, CaseOutcome::ambiguous);
    EXPECT_NE(c.note.find("not confirmed: in round 1 BASE's build"), std::string::npos) << c.note;
    EXPECT_NE(c.note.find("needs 9.00 GiB"), std::string::npos) << c.note;
  }
}

TEST(ConfirmDecision, SummariesCountTheConfirmedOutcomes) {
  CompareReport r;
  r.cases = {suspect(CaseOutcome::slower), suspect(CaseOutcome::same)};
  r.cases[1].key += "x";
  summarise(r);
  EXPECT_TRUE(r.regression());
  apply_confirmation(r.cases[0], InterleavedCase{{}, rounds_of(16, 6, 1.0, 0.05)}, DecisionSettings{});
  summarise(r);
  EXPECT_FALSE(r.regression()) << r.cases[0].note;
  EXPECT_EQ(r.overall.counts[CaseOutcome::same], 2);
  EXPECT_EQ(r.overall.counts[CaseOutcome::slower], 0);
  EXPECT_NEAR(r.overall.geomean_ratio, 1.048, 1e-9) << "both cases' reports' ratios";
}

TEST(ConfirmDecision, EveryOutputShowsBothVerdicts) {
  CompareReport r;
  r.cases = {suspect(CaseOutcome::ambiguous)};
  apply_confirmation(r.cases[0], InterleavedCase{{}, rounds_of(17, 6, 1.0, 0.05)}, DecisionSettings{});
  r.confirm = ConfirmInfo{1, 6, "NVIDIA H100 80GB HBM3", "/b/kwb (abc)", "/n/kwb (def)"};
  summarise(r);
  const std::string md = compare_markdown(r);
  EXPECT_NE(md.find("## Confirmed by re-measurement (--confirm)"), std::string::npos) << md;
  EXPECT_NE(md.find("| same (confirmed) | `rmsnorm_fwd:fused_v2_vec16:bf16:4096x4096` |"), std::string::npos) << md;
  EXPECT_NE(md.find("ambiguous (throttled) 1.048 [1.046, 1.049] | 6 |"), std::string::npos) << md;
  EXPECT_NE(md.find("1 case re-measured on NVIDIA H100 80GB HBM3, 6 interleaved rounds each (BASE by /b/kwb (abc)"),
            std::string::npos) << md;
  const std::string xml = compare_junit_xml(r);
  EXPECT_NE(xml.find("same (confirmed): ratio"), std::string::npos) << xml;
  EXPECT_NE(xml.find("first verdict (from the reports): ambiguous (throttled)"), std::string::npos) << xml;
  EXPECT_EQ(xml.find("<failure"), std::string::npos) << "confirmed same fails nothing: " << xml;
}

}  // namespace
}  // namespace confirm_decision_test
}  // namespace kwb
