// The confirmed verdict of a case from its interleaved rounds (`kwb compare --confirm`,
// harness/session/interleaved_runner.hpp). Pure: rounds in, a Decision out.
//
// The unit of evidence is the round, not the sample: each round times the case once per side,
// back to back, and gives one paired ratio median(NEW) / median(BASE). Samples within a run are
// not independent of the run's clocks and power state; rounds are as independent as the
// interleaving makes them, and what drifts between them (clocks, temperature) moves both sides.
// So:
//   ratio      the geometric mean of the rounds' ratios;
//   interval   the Student t interval of the mean log ratio (t with rounds - 1 degrees of freedom,
//              so 6 rounds widen it by 2.571 standard errors, not 1.96): it holds the spread
//              between rounds, which a bootstrap over one run's samples cannot see;
//   p          the paired t test of "no change" on the log ratios;
//   verdict    decision.hpp's rule on that interval and p: slower or faster needs the whole
//              interval beyond the band 1 +- max(threshold, min effect / BASE median) and p < alpha,
//              same needs it inside, the rest is ambiguous (also under kMinConfirmRounds rounds).
// The clock rule (clock_rule.hpp) is not applied: interleaving is what answers it, and a change
// whose own kernels draw the GPU into its power limit is slower for real.
#pragma once

#include <span>

#include "harness/session/interleaved_runner.hpp"
#include "reports/compare/compare_report.hpp"

namespace kwb {

inline constexpr int kMinConfirmRounds = 3;   // fewer timed rounds leave the verdict ambiguous
inline constexpr int kDefaultConfirmRounds = 6;

// The verdict from rounds whose both records are timed (others are ignored). Uses the settings'
// threshold, min_effect_us, alpha and confidence; not its run-to-run spread (the rounds measure it).
Decision decide_rounds(std::span<const InterleavedRound> rounds, const DecisionSettings& settings);

// Replaces `c`'s verdict with the one its rounds give, keeping the first in c.first. A round in
// which NEW's build failed the case makes it failed (a NEW that fails when measured again is not
// correct); one where BASE's failed, or either skipped it, leaves it ambiguous with the reason.
void apply_confirmation(ComparedCase& c, const InterleavedCase& measured, const DecisionSettings& settings);

}  // namespace kwb
