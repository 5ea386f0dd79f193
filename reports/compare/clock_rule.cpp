// Verdicts that the two sides' SM clocks could explain (see clock_rule.hpp).
#include "reports/compare/clock_rule.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace kwb {
namespace {

double throttled_share(const ClockSummary& c) {
  return c.samples > 0 ? static_cast<double>(c.throttled_samples) / static_cast<double>(c.samples) : 0.0;
}

double clock_middle(const ClockSummary& c) { return (c.sm_min_mhz + c.sm_max_mhz) / 2; }

std::string throttled_text(const char* side, const ClockSummary& c) {
  std::string reasons;
  for (const auto& r : c.throttle_reasons) reasons += (reasons.empty() ? "" : ", ") + r;
  return fmt::format("{} had {} of {} samples ({:.0f}%) throttled{}, SM clock {:.0f}-{:.0f} MHz", side,
                     c.throttled_samples, c.samples, 100 * throttled_share(c),
                     reasons.empty() ? "" : " (" + reasons + ")", c.sm_min_mhz, c.sm_max_mhz);
}

std::string side_text(const char* side, const ClockSummary& c) {
  return fmt::format("{} mean SM clock {:.0f} MHz ({:.0f}% of its samples throttled)", side, c.sm_mean_mhz,
                     100 * throttled_share(c));
}

// The rule for reports that carry mean clocks: does the verdict survive the cycle ratio?
std::optional<std::string> cycle_rule(const ClockSummary& base, const ClockSummary& next, const Decision& d) {
  const double clock_ratio = next.sm_mean_mhz / base.sm_mean_mhz;
  const double lo = d.ratio.lo * clock_ratio, hi = d.ratio.hi * clock_ratio;
  const bool holds = d.verdict == Verdict::slower ? lo > 1 + d.tolerance : hi < 1 - d.tolerance;
  if (holds) return std::nullopt;
  return fmt::format(
      "clocks differ: {}, {}; scaled by the clock ratio {:.4f} (a compute-bound kernel's time follows its "
      "clock) the interval is [{:.4f}, {:.4f}], inside the +-{:.3g}% band",
      side_text("BASE", base), side_text("NEW", next), clock_ratio, lo, hi, 100 * d.tolerance);
}

bool power_capped(const ClockSummary& c) {
  const bool power_reason = std::any_of(c.throttle_reasons.begin(), c.throttle_reasons.end(), [](const std::string& r) {
    return r == "sw_power_cap" || r == "hw_power_brake_slowdown";
  });
  return power_reason && throttled_share(c) >= kPowerCappedShare;
}

// A verdict that stands on the cycle ratio but not against the power cap's run-to-run swing.
std::optional<std::string> power_cap_rule(const ClockSummary& base, const ClockSummary& next, const Decision& d) {
  if (!power_capped(base) && !power_capped(next)) return std::nullopt;
  const bool beyond_swing = d.verdict == Verdict::slower ? d.ratio.lo > 1 + d.tolerance + kPowerCapSwing
                                                         : d.ratio.hi < 1 - d.tolerance - kPowerCapSwing;
  if (beyond_swing) return std::nullopt;
  return fmt::format(
      "power-capped: {}, {}; under the power cap the clock readings between launches do not show the clocks "
      "during the kernels, and such a case swings by up to {:.0f}% from run to run (an A/A pair read a GEMM +4.7% "
      "at mean clocks 0.5% apart). Judge it against its own run-to-run spread (--base-runs, --history: {} other "
      "runs or more) or re-measure it interleaved (--confirm)",
      side_text("BASE", base), side_text("NEW", next), 100 * kPowerCapSwing, kPowerCapSpreadRuns);
}

// The rule for reports written before the mean clock was recorded.
std::optional<std::string> range_rule(const TimingResult& base, const TimingResult& next) {
  std::string throttled;
  for (const auto& [side, timing] : {std::pair{"BASE", &base}, std::pair{"NEW", &next}})
    if (timing->clocks && throttled_share(*timing->clocks) > kMaxThrottledShare)
      throttled += (throttled.empty() ? "" : "; ") + throttled_text(side, *timing->clocks);
  if (!throttled.empty())
    return fmt::format("throttled: {} (more than {:.0f}% of a side's samples)", throttled, 100 * kMaxThrottledShare);
  if (!base.clocks || !next.clocks) return std::nullopt;
  const double b = clock_middle(*base.clocks), n = clock_middle(*next.clocks);
  if (!(b > 0) || !(n > 0)) return std::nullopt;
  const double shift = n / b - 1;
  if (std::abs(shift) <= kMaxClockShift) return std::nullopt;
  return fmt::format("clock-shifted: SM clock BASE {:.0f}-{:.0f} MHz, NEW {:.0f}-{:.0f} MHz; the middles differ by "
                     "{:+.1f}%, more than the {:.0f}% a timing comparison allows",
                     base.clocks->sm_min_mhz, base.clocks->sm_max_mhz, next.clocks->sm_min_mhz,
                     next.clocks->sm_max_mhz, 100 * shift, 100 * kMaxClockShift);
}

}  // namespace

std::optional<std::string> clock_problem(const TimingResult& base, const TimingResult& next, const Decision& decision,
                                         int spread_runs) {
  if (decision.verdict != Verdict::slower && decision.verdict != Verdict::faster) return std::nullopt;
  if (base.clocks && next.clocks && base.clocks->sm_mean_mhz > 0 && next.clocks->sm_mean_mhz > 0) {
    if (auto problem = cycle_rule(*base.clocks, *next.clocks, decision)) return problem;
    if (spread_runs >= kPowerCapSpreadRuns) return std::nullopt;
    return power_cap_rule(*base.clocks, *next.clocks, decision);
  }
  return range_rule(base, next);
}

}  // namespace kwb
