// Builds the comparison model (see compare_report.hpp): match, decide per case, summarise per op.
#include "reports/compare/compare_report.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "reports/compare/clock_rule.hpp"
#include "reports/compare/match.hpp"

namespace kwb {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Why a matched case has no comparable timing, in words.
std::string why_not_timed(const CaseRecord& base, const CaseRecord& next) {
  auto side = [](const char* name, const CaseRecord& r) {
    std::string s = std::string(name) + " " + std::string(to_string(r.disposition));
    if (!r.reason.empty()) s += " (" + r.reason + ")";
    return r.timing ? s : s + ", not timed";
  };
  if (!next.timing) return side("NEW", next);
  return side("BASE", base);
}

ComparedCase compare_case(const CasePair& pair, const CompareInputs& in) {
  const CaseRecord& b = *pair.base;
  const CaseRecord& n = *pair.next;
  ComparedCase c;
  c.key = pair.key;
  c.op = n.op;
  c.base_disposition = b.disposition;
  c.new_disposition = n.disposition;
  c.threshold = threshold_for(n.op, in.suite_thresholds, in.settings.threshold);
  if (b.timing && n.timing) {
    DecisionSettings s = in.settings;
    s.threshold = c.threshold;
    if (auto it = in.spreads.find(c.key); it != in.spreads.end()) {
      s.run_spread = it->second.spread;
      s.spread_runs = it->second.runs;
    }
    c.decision = decide(b.timing->samples_us, n.timing->samples_us, s);
    c.base_lacks_samples = b.timing->samples_us.empty();
    c.new_lacks_samples = n.timing->samples_us.empty();
    // A slower or faster verdict the clocks could explain does not stand.
    if (auto problem = clock_problem(*b.timing, *n.timing, c.decision, s.spread_runs)) {
      c.throttled = true;
      c.decision.reason = fmt::format("{}; the samples alone said {}: {}", *problem, to_string(c.decision.verdict),
                                      c.decision.reason);
      c.decision.verdict = Verdict::ambiguous;
    }
    // Reports without per-sample arrays (samples/ drops them) still show the ratio of medians.
    if (c.decision.base_count == 0) c.decision.base_median_us = b.timing->span.median;
    if (c.decision.new_count == 0) c.decision.new_median_us = n.timing->span.median;
    c.decision.ratio.ratio = c.decision.new_median_us / c.decision.base_median_us;
  } else {
    c.decision.ratio = {kNaN, kNaN, kNaN};
    c.decision.p_value = kNaN;
    c.decision.base_median_us = b.timing ? b.timing->span.median : kNaN;
    c.decision.new_median_us = n.timing ? n.timing->span.median : kNaN;
  }
  if (n.disposition == Disposition::failed) {
    c.outcome = CaseOutcome::failed;
    c.note = "failed in NEW: " + (n.reason.empty() ? std::string("verification failed") : n.reason);
  } else if (!b.timing || !n.timing) {
    c.outcome = CaseOutcome::not_timed;
    c.note = why_not_timed(b, n);
  } else {
    switch (c.decision.verdict) {
      case Verdict::slower: c.outcome = CaseOutcome::slower; break;
      case Verdict::faster: c.outcome = CaseOutcome::faster; break;
      case Verdict::same: c.outcome = CaseOutcome::same; break;
      case Verdict::ambiguous: c.outcome = CaseOutcome::ambiguous; break;
    }
    c.note = c.decision.reason;
    if (b.disposition == Disposition::failed) c.note += "; failed in BASE, passes in NEW";
  }
  if (n.disposition == Disposition::not_verified) c.note += "; NEW was not verified";
  return c;
}

void add_to(OpSummary& s, const ComparedCase& c) {
  s.counts[c.outcome] += 1;
  s.unverified += c.new_disposition == Disposition::not_verified;
  const double ratio = c.reports_ratio();
  if (c.timed() && std::isfinite(ratio) && ratio > 0) {
    // Running mean of the logs, kept in geomean_ratio until finish() exponentiates it.
    s.ratios += 1;
    s.geomean_ratio += std::log(ratio);
  }
}

void finish(OpSummary& s) { s.geomean_ratio = s.ratios ? std::exp(s.geomean_ratio / s.ratios) : kNaN; }

}  // namespace

std::string_view to_string(CaseOutcome o) {
  switch (o) {
    case CaseOutcome::failed: return "failed";
    case CaseOutcome::slower: return "slower";
    case CaseOutcome::faster: return "faster";
    case CaseOutcome::ambiguous: return "ambiguous";
    case CaseOutcome::same: return "same";
    case CaseOutcome::not_timed: return "not timed";
  }
  return "?";
}

bool ComparedCase::has_ratio() const {
  return std::isfinite(decision.ratio.ratio) && decision.ratio.ratio > 0;
}

std::string ComparedCase::outcome_label() const {
  if (first) return std::string(to_string(outcome)) + " (confirmed)";
  return throttled ? "ambiguous (throttled)" : std::string(to_string(outcome));
}

bool CompareReport::regression() const {
  return std::any_of(cases.begin(), cases.end(), [](const ComparedCase& c) {
    return c.outcome == CaseOutcome::slower || c.outcome == CaseOutcome::failed;
  });
}

bool CompareReport::fails_on(FailOnClass c) const {
  return std::find(fail_on.begin(), fail_on.end(), c) != fail_on.end();
}

std::vector<std::string> CompareReport::fail_on_hits() const {
  std::vector<std::string> hits;
  const auto ambiguous = overall.counts.find(CaseOutcome::ambiguous);
  if (fails_on(FailOnClass::ambiguous) && ambiguous != overall.counts.end() && ambiguous->second > 0)
    hits.push_back(fmt::format("{} ambiguous", ambiguous->second));
  if (fails_on(FailOnClass::missing) && !only_in_base.empty())
    hits.push_back(fmt::format("{} missing from NEW", only_in_base.size()));
  if (fails_on(FailOnClass::skipped) && !newly_skipped.empty())
    hits.push_back(fmt::format("{} skipped in NEW (timed in BASE)", newly_skipped.size()));
  return hits;
}

std::optional<std::string> missing_samples_problem(const CompareReport& r) {
  for (const bool base_side : {true, false}) {
    const ComparedCase* first = nullptr;
    int count = 0;
    for (const ComparedCase& c : r.cases)
      if (base_side ? c.base_lacks_samples : c.new_lacks_samples) {
        if (!first) first = &c;
        ++count;
      }
    if (!first) continue;
    return fmt::format(
        "{}: case {}: timing.samples_us is empty{}: the gate judges a case from its per-sample times (a bootstrap "
        "interval and a rank test), and from medians alone it could never call a case slower. Most reports under "
        "samples/ drop these arrays to stay small (samples/h100-compare/ keeps them: a pair to try the gate on); "
        "compare reports as `kwb run` writes them (it keeps every sample), e.g. run {} again",
        base_side ? r.base_name : r.new_name, first->key,
        count > 1 ? fmt::format(" (and in {} other timed case{} of that report)", count - 1, count > 2 ? "s" : "") : "",
        base_side ? "BASE" : "NEW");
  }
  return std::nullopt;
}

double threshold_for(const std::string& op, const std::map<std::string, double>& suite, double flag) {
  if (auto it = suite.find(op); it != suite.end()) return it->second;
  if (auto it = suite.find("default"); it != suite.end()) return it->second;
  return flag;
}

CompareReport compare_reports(const CompareInputs& in) {
  CompareReport out;
  out.base_name = in.base_name;
  out.new_name = in.new_name;
  out.settings = in.settings;
  out.threshold_source = in.threshold_source;
  out.fail_on = in.fail_on;
  out.fail_on_source = in.fail_on_source;
  out.base_runs = in.base_runs;
  out.history_runs = in.history_runs;
  out.history_name = in.history_name;
  out.environment = environment_differences(*in.base, *in.next);
  const CaseMatch match = match_cases(in.base->cases, in.next->cases, in.base_name, in.new_name);
  for (const CaseRecord* r : match.only_in_base) out.only_in_base.push_back(case_key(*r));
  for (const CaseRecord* r : match.only_in_new) out.only_in_new.push_back(case_key(*r));
  for (const CasePair& pair : match.pairs) {
    ComparedCase c = compare_case(pair, in);
    out.skipped_in_new += c.new_disposition == Disposition::skipped;
    if (c.new_disposition == Disposition::skipped && pair.base->timing) out.newly_skipped.push_back(c.key);
    out.cases.push_back(std::move(c));
  }
  summarise(out);
  return out;
}

void summarise(CompareReport& out) {
  out.ops.clear();
  out.overall = OpSummary{};
  out.overall.op = "(all)";
  for (const ComparedCase& c : out.cases) {
    auto op = std::find_if(out.ops.begin(), out.ops.end(), [&](const OpSummary& s) { return s.op == c.op; });
    if (op == out.ops.end()) {
      out.ops.emplace_back();
      out.ops.back().op = c.op;
      op = std::prev(out.ops.end());
    }
    add_to(*op, c);
    add_to(out.overall, c);
  }
  for (OpSummary& s : out.ops) finish(s);
  finish(out.overall);
}

std::vector<const ComparedCase*> by_largest_change(const CompareReport& report) {
  std::vector<const ComparedCase*> order;
  for (const ComparedCase& c : report.cases) order.push_back(&c);
  auto change = [](const ComparedCase* c) { return c->has_ratio() ? std::abs(std::log(c->decision.ratio.ratio)) : -1.0; };
  std::stable_sort(order.begin(), order.end(), [&](const ComparedCase* a, const ComparedCase* b) {
    const bool fa = a->outcome == CaseOutcome::failed, fb = b->outcome == CaseOutcome::failed;
    if (fa != fb) return fa;
    return change(a) > change(b);
  });
  return order;
}

}  // namespace kwb
