// Paired rounds -> interval, test, verdict (see confirm_decision.hpp).
#include "reports/compare/confirm_decision.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "reports/compare/student_t.hpp"

namespace kwb {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string percent(double fraction) { return fmt::format("{:.3g}%", fraction * 100); }

// A side's samples, else its median alone (a record always has span.median).
std::vector<double> samples_of(const TimingResult& t) {
  return t.samples_us.empty() ? std::vector<double>{t.span.median} : t.samples_us;
}

std::string side_problem(const char* side, const CaseRecord& r) {
  std::string s = fmt::format("{}'s build {} it", side, r.disposition == Disposition::skipped ? "skipped" : "failed");
  if (!r.reason.empty()) s += " (" + r.reason + ")";
  return s;
}

}  // namespace

Decision decide_rounds(std::span<const InterleavedRound> rounds, const DecisionSettings& s) {
  Decision d;
  d.p_value = kNaN;
  d.ratio = {kNaN, kNaN, kNaN};
  d.tolerance = s.threshold;
  std::vector<double> logs, base_all, new_all;
  for (const InterleavedRound& r : rounds) {
    if (!timed_record(r.base) || !timed_record(r.next)) continue;
    const std::vector<double> b = samples_of(*r.base.timing), n = samples_of(*r.next.timing);
    const double mb = median_of(b), mn = median_of(n);
    if (!(mb > 0) || !(mn > 0) || !std::isfinite(mb) || !std::isfinite(mn)) continue;
    logs.push_back(std::log(mn / mb));
    base_all.insert(base_all.end(), b.begin(), b.end());
    new_all.insert(new_all.end(), n.begin(), n.end());
  }
  d.base_count = base_all.size();
  d.new_count = new_all.size();
  d.base_median_us = median_of(base_all);
  d.new_median_us = median_of(new_all);
  const std::size_t k = logs.size();
  if (k < static_cast<std::size_t>(kMinConfirmRounds)) {
    d.reason = fmt::format("only {} round{} timed on both sides (at least {} are needed)", k, k == 1 ? "" : "s",
                           kMinConfirmRounds);
    if (k > 0) d.ratio.ratio = d.new_median_us / d.base_median_us;
    return d;
  }
  double mean = 0;
  for (double x : logs) mean += x;
  mean /= static_cast<double>(k);
  double ss = 0;
  for (double x : logs) ss += (x - mean) * (x - mean);
  const double df = static_cast<double>(k - 1);
  const double se = std::sqrt(ss / df / static_cast<double>(k));
  const double half = student_t_quantile(s.confidence, df) * se;
  d.ratio = {std::exp(mean), std::exp(mean - half), std::exp(mean + half)};
  d.p_value = se > 0 ? student_t_two_sided_p(mean / se, df) : (mean == 0 ? 1.0 : 0.0);

  const double min_effect = s.min_effect_us / d.base_median_us;
  d.tolerance = std::max(s.threshold, min_effect);
  std::string band = fmt::format("+-{}", percent(d.tolerance));
  if (min_effect > s.threshold)
    band += fmt::format(" (the {} us minimum effect at a {:.4g} us median)", s.min_effect_us, d.base_median_us);
  const std::string interval =
      fmt::format("{:.0f}% interval [{:.4f}, {:.4f}] over {} interleaved rounds (round ratios {:.4f} to {:.4f})",
                  s.confidence * 100, d.ratio.lo, d.ratio.hi, k, std::exp(*std::min_element(logs.begin(), logs.end())),
                  std::exp(*std::max_element(logs.begin(), logs.end())));
  const bool above = d.ratio.lo > 1 + d.tolerance, below = d.ratio.hi < 1 - d.tolerance;
  if (above || below) {
    const char* where = above ? "above" : "below";
    if (d.p_value < s.alpha) {
      d.verdict = above ? Verdict::slower : Verdict::faster;
      d.reason = fmt::format("the {} lies {} the {} band; paired t test p = {:.2g}", interval, where, band, d.p_value);
    } else {
      d.reason = fmt::format("the {} lies {} the {} band, but the paired t test's p = {:.2g} is not below {}",
                             interval, where, band, d.p_value, s.alpha);
    }
  } else if (d.ratio.lo >= 1 - d.tolerance && d.ratio.hi <= 1 + d.tolerance) {
    d.verdict = Verdict::same;
    d.reason = fmt::format("the {} lies inside the {} band", interval, band);
  } else {
    d.reason = fmt::format("the {} crosses an edge of the {} band: the rounds cannot tell", interval, band);
  }
  return d;
}

void apply_confirmation(ComparedCase& c, const InterleavedCase& measured, const DecisionSettings& settings) {
  c.first = FirstVerdict{c.outcome, c.throttled, c.decision, c.note};
  c.throttled = false;
  DecisionSettings s = settings;
  s.threshold = c.threshold;
  c.decision = decide_rounds(measured.rounds, s);
  c.confirm_rounds = 0;
  for (const InterleavedRound& r : measured.rounds) c.confirm_rounds += timed_record(r.base) && timed_record(r.next);
  // A round that did not time both sides ends the rounds (interleaved_runner.hpp): it is the last.
  const InterleavedRound* broken =
      !measured.rounds.empty() && !(timed_record(measured.rounds.back().base) && timed_record(measured.rounds.back().next))
          ? &measured.rounds.back()
          : nullptr;
  if (broken && broken->next.disposition == Disposition::failed) {
    c.outcome = CaseOutcome::failed;
    c.note = fmt::format("failed in NEW when re-measured (round {} of the confirm run): {}", measured.rounds.size(),
                         broken->next.reason.empty() ? std::string("verification failed") : broken->next.reason);
    return;
  }
  if (broken) {
    c.outcome = CaseOutcome::ambiguous;
    const CaseRecord& r = timed_record(broken->base) ? broken->next : broken->base;
    c.note = fmt::format("not confirmed: in round {} {}; the reports' verdict cannot be re-measured here",
                         measured.rounds.size(), side_problem(&r == &broken->base ? "BASE" : "NEW", r));
    return;
  }
  switch (c.decision.verdict) {
    case Verdict::slower: c.outcome = CaseOutcome::slower; break;
    case Verdict::faster: c.outcome = CaseOutcome::faster; break;
    case Verdict::same: c.outcome = CaseOutcome::same; break;
    case Verdict::ambiguous: c.outcome = CaseOutcome::ambiguous; break;
  }
  c.note = "confirmed: " + c.decision.reason;
}

}  // namespace kwb
