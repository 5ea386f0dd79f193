// Each case's run-to-run spread, from other reports of BASE's build (`kwb compare --base-runs`).
//
// The verdict's interval is bootstrapped from the samples of one run per side, so it sees the
// noise within a run but not how far a second run of the same build lands (clocks, placement,
// another boot): that spread made A/A pairs read "slower" at p = 5e-97. Given more runs of BASE,
// a case's spread is the largest |median(run) / median(BASE) - 1| over the runs that timed it,
// and the verdict's band widens to it (decision.hpp). Only medians are read, so runs without
// per-sample arrays serve as well.
//
// The runs must be of BASE's build measured alike (same git SHA, GPU, driver, CUDA runtime, mode,
// flush, launch, preset, timer, test slowdown): the spread between two builds is a change of code, and
// would widen the band over the very regressions the gate is for. Another is refused.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "harness/record/json_report.hpp"

namespace kwb {

struct NamedReport {
  const Report* report = nullptr;
  std::string name;  // the file, for messages
};

struct CaseSpread {
  double spread = 0;  // relative: 0.02 = BASE's median moved 2% between runs
  int runs = 0;       // the other runs that timed the case
};

// Throws ReportError naming the run, what differs from BASE and how to fix it.
void check_run_of_base_build(const NamedReport& base, const NamedReport& run);

// Case identity -> spread, for the cases of BASE timed by at least one run (others are absent).
// Checks every run first (check_run_of_base_build) and throws ReportError for a case twice in a run.
std::map<std::string, CaseSpread> run_to_run_spread(const NamedReport& base, const std::vector<NamedReport>& runs);

}  // namespace kwb
