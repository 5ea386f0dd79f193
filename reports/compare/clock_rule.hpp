// Were the two sides of a case timed at comparable SM clocks? A ratio of medians between a run at
// full clock and one that was power-throttled can measure the clocks, not the code: an A/A pair of
// the smoke suite read "+4.8% slower, p = 5e-97" that way. A verdict the clocks could explain is
// never called slower or faster; compare marks it `ambiguous (throttled)` with this rule's reason.
//
// The rule, on each side's timing.clocks (harness/record/record.hpp, ClockSummary):
//   - Both sides carry the mean SM clock their samples ran at. A compute-bound kernel's time
//     follows its clock (time x clock = cycles); a memory-bound one's does not. So the verdict
//     stands only if it also holds for the cycle ratio, the interval of NEW/BASE scaled by
//     mean clock NEW / mean clock BASE.
//   - Power-capped cases: when at least kPowerCappedShare of a side's samples read throttled and
//     the power cap (sw_power_cap, or the hw_power_brake_slowdown) was among the reasons that side
//     read (the record keeps the reasons per case, not per sample), the mean of the clock readings
//     (one or two a batch, between launches) does not follow what the cap did during the kernels:
//     an A/A pair on an H100 read a cuBLASLt GEMM +4.7% slower (p = 1e-107) at mean clocks 1932
//     and 1923 MHz (2026-11-26), and the same GEMM ran 10% faster from rest than capped. Two
//     reports cannot tell a change of that size from the cap's swing, so a verdict whose interval
//     stays within kPowerCapSwing beyond the band stands only where the comparison has the case's
//     run-to-run spread from at least kPowerCapSpreadRuns other runs (--base-runs, --history: its
//     band then includes what the cap did in those runs); otherwise it is ambiguous, and
//     `--confirm` (interleaved rounds, both builds under the same cap) decides. A change larger
//     than that swing stands: a GEMM that always runs under the cap can still fail the gate.
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
inline constexpr double kPowerCappedShare = 0.5;    // of a side's samples throttled, a power reason read
inline constexpr double kPowerCapSwing = 0.10;      // rested against capped, the same GEMM (H100)
inline constexpr int kPowerCapSpreadRuns = 2;       // other runs of BASE that give a spread to trust

// The reason the case's clocks could explain `decision`'s slower or faster verdict (its interval
// against the band decision.tolerance), or nothing when the verdict stands. `spread_runs`: how
// many other runs gave the case's run-to-run spread (--base-runs, --history), which its band includes.
std::optional<std::string> clock_problem(const TimingResult& base, const TimingResult& next, const Decision& decision,
                                         int spread_runs = 0);

}  // namespace kwb
