// Number formatting for the comparison outputs (see compare_text.hpp).
#include "reports/compare/compare_text.hpp"

#include <cmath>

#include <fmt/format.h>

namespace kwb {

std::string format_ratio(double ratio) { return std::isfinite(ratio) ? fmt::format("{:.3f}", ratio) : "-"; }

std::string format_change(double ratio) {
  return std::isfinite(ratio) ? fmt::format("{:+.1f}%", (ratio - 1) * 100) : "-";
}

std::string format_interval(const RatioInterval& r) {
  if (!std::isfinite(r.lo) || !std::isfinite(r.hi)) return "-";
  return fmt::format("[{:.3f}, {:.3f}]", r.lo, r.hi);
}

std::string format_p(double p) {
  if (!std::isfinite(p)) return "-";
  return p < 1e-3 ? fmt::format("{:.1e}", p) : fmt::format("{:.3f}", p);
}

std::string format_us(double us) { return std::isfinite(us) ? fmt::format("{:.2f}", us) : "-"; }

std::string format_percent(double fraction) { return fmt::format("{:.3g}%", fraction * 100); }

std::string evidence(const ComparedCase& c) {
  const Decision& d = c.decision;
  return fmt::format("ratio {} {}, p {}, BASE {} us, NEW {} us", format_ratio(d.ratio.ratio),
                     format_interval(d.ratio), format_p(d.p_value), format_us(d.base_median_us),
                     format_us(d.new_median_us));
}

std::string first_verdict_text(const ComparedCase& c) {
  if (!c.first) return "";
  const FirstVerdict& f = *c.first;
  const Decision& d = f.decision;
  return fmt::format("first verdict (from the reports): {}, ratio {} {}, p {}: {}",
                     f.throttled ? "ambiguous (throttled)" : std::string(to_string(f.outcome)), format_ratio(d.ratio.ratio),
                     format_interval(d.ratio), format_p(d.p_value), f.note);
}

std::string outcome_counts(const OpSummary& s) {
  std::string out;
  for (auto o : {CaseOutcome::failed, CaseOutcome::slower, CaseOutcome::faster, CaseOutcome::ambiguous,
                 CaseOutcome::same, CaseOutcome::not_timed}) {
    auto it = s.counts.find(o);
    if (it == s.counts.end() || it->second == 0) continue;
    out += (out.empty() ? "" : ", ") + fmt::format("{} {}", it->second, to_string(o));
  }
  if (s.unverified) out += fmt::format("{}{} not verified", out.empty() ? "" : ", ", s.unverified);
  return out.empty() ? "no cases" : out;
}

std::string result_text(const CompareReport& r) {
  if (r.regression()) return "regression";
  const std::vector<std::string> hits = r.fail_on_hits();
  if (hits.empty()) return "no regression";
  std::string text = "fails the gate: ";
  for (std::size_t i = 0; i < hits.size(); ++i) text += (i ? ", " : "") + hits[i];
  return text;
}

std::vector<std::string> gate_lines(const CompareReport& r) {
  std::vector<std::string> lines;
  if (!r.threshold_source.empty()) lines.push_back(r.threshold_source);
  if (!r.fail_on_source.empty()) lines.push_back(r.fail_on_source);
  std::vector<std::string> sources;
  if (r.base_runs > 0)
    sources.push_back(fmt::format("{} other run{} of BASE (--base-runs)", r.base_runs, r.base_runs == 1 ? "" : "s"));
  if (!r.history_name.empty())
    sources.push_back(fmt::format("{} stored run{} of BASE's build (--history {})", r.history_runs,
                                  r.history_runs == 1 ? "" : "s", r.history_name));
  if (!sources.empty()) {
    int widened = 0;
    for (const ComparedCase& c : r.cases) widened += c.decision.band_from_spread;
    lines.push_back(fmt::format("run-to-run spread: from {}; it set the band of {} case{}",
                                sources.size() == 2 ? sources[0] + " and " + sources[1] : sources[0], widened,
                                widened == 1 ? "" : "s"));
  }
  if (r.confirm) {
    const ConfirmInfo& c = *r.confirm;
    if (c.cases == 0)
      lines.push_back("--confirm: no case to re-measure (no slower, faster or ambiguous verdict)");
    else
      lines.push_back(fmt::format("--confirm: {} case{} re-measured on {}, {} interleaved rounds each (BASE by {}, NEW "
                                  "by {}); their confirmed verdicts replace the reports' and decide the result",
                                  c.cases, c.cases == 1 ? "" : "s", c.device, c.rounds, c.base_build, c.new_build));
  }
  return lines;
}

}  // namespace kwb
