// Were the two sides of a case timed at comparable SM clocks? A ratio of medians between a run at
// full clock and one that was power-throttled measures the clocks, not the code: an A/A pair of
// the smoke suite read "+4.8% slower, p = 5e-97" that way. Such a case is never called slower or
// faster; compare marks it `ambiguous (throttled)` with this rule's reason.
//
// The rule, on each side's timing.clocks (harness/record/record.hpp, ClockSummary):
//   throttled      more than kMaxThrottledShare of a side's samples were taken in a batch that
//                  NVML read as throttled (a throttle reason, or under 90% of the rated clock);
//   clock-shifted  the middles of the two sides' SM clock ranges (min + max) / 2 differ by more
//                  than kMaxClockShift: a compute-bound kernel's time follows its clock, so a
//                  shift as large as the default threshold could by itself read as a change.
// A side without clock readings (no NVML) cannot be judged, and the rule stays silent.
#pragma once

#include <optional>
#include <string>

#include "harness/record/record.hpp"

namespace kwb {

inline constexpr double kMaxThrottledShare = 0.05;  // of a side's samples
inline constexpr double kMaxClockShift = 0.03;      // relative difference of the clock middles

// The reason the case's clocks make its timings incomparable ("throttled: NEW had 40 of 100
// samples (40%) throttled (sw_power_cap), above the 5% allowed"), or nothing when they are fine.
std::optional<std::string> clock_problem(const TimingResult& base, const TimingResult& next);

}  // namespace kwb
