// Were the two sides of a case timed at comparable SM clocks? A ratio of medians between a run at
// full clock and one that was power-throttled can measure the clocks, not the code: an A/A pair of
// the smoke suite read "+4.8% slower, p = 5e-97" that way. A verdict the clocks could explain is
// never called slower or faster; compare marks it `ambiguous (throttled)` with this rule's reason.
//
// The rule, on each side's timing.clocks (harness/record/record.hpp, ClockSummary):
//   - Both sides carry the mean SM clock their samples ran at. A compute-bound kernel's time
//     follows its clock (time x clock = cycles); a memory-bound one's does not. So the verdict
//     stands only if it also holds for the cycle ratio, the interval of NEW/BASE scaled by
//     mean clock NEW / mean clock BASE: then no clock difference can explain it, however much
//     either side was throttled. Throttling alone is no reason: a large GEMM runs under the power
//     cap in every run, and a rule that set every such case aside could never catch its regression.
//   - Reports without mean clocks (written before they were recorded) fall back to the old rule:
//     more than kMaxThrottledShare of a side's samples throttled, or the middles of the two sides'
//     SM clock ranges more than kMaxClockShift apart.
// A side without clock readings (no NVML) cannot be judged, and the rule stays silent.
#pragma once

#include <optional>
#include <string>

#include "harness/record/record.hpp"
#include "reports/compare/decision.hpp"

namespace kwb {

inline constexpr double kMaxThrottledShare = 0.05;  // of a side's samples
inline constexpr double kMaxClockShift = 0.03;      // relative difference of the clock middles

// The reason the case's clocks could explain `decision`'s slower or faster verdict (its interval
// against the band decision.tolerance), or nothing when the verdict stands.
std::optional<std::string> clock_problem(const TimingResult& base, const TimingResult& next, const Decision& decision);

}  // namespace kwb
