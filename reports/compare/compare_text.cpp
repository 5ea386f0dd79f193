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

}  // namespace kwb
