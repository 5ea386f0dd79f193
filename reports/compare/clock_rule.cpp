// Throttled or clock-shifted sides of a case (see clock_rule.hpp).
#include "reports/compare/clock_rule.hpp"

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

}  // namespace

std::optional<std::string> clock_problem(const TimingResult& base, const TimingResult& next) {
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

}  // namespace kwb
