// Run-to-run spread of BASE's medians over other runs of its build (see run_spread.hpp).
#include "reports/compare/run_spread.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/record/json_node.hpp"
#include "reports/compare/environment_diff.hpp"
#include "reports/compare/match.hpp"

namespace kwb {
namespace {

constexpr const char* kHowToFix =
    "--base-runs takes more reports of BASE's build measured alike (`kwb run` again with the same build, GPU and "
    "settings); pass such a report, or leave this one out";

bool timed_with_median(const CaseRecord& r) { return r.timing && r.timing->span.median > 0; }

}  // namespace

void check_run_of_base_build(const NamedReport& base, const NamedReport& run) {
  const RunInfo& b = base.report->run;
  const RunInfo& r = run.report->run;
  if (b.git_sha != r.git_sha)
    throw ReportError(fmt::format("{}: run.git_sha: another build than BASE ({}: {}, {}: {}); the spread between two "
                                  "builds is a change of code, not noise. {}",
                                  run.name, base.name, b.git_sha.empty() ? "(none)" : b.git_sha, run.name,
                                  r.git_sha.empty() ? "(none)" : r.git_sha, kHowToFix));
  const auto differences = environment_differences(*base.report, *run.report);
  if (!differences.empty()) {
    std::string what;
    for (const EnvDifference& d : differences)
      what += fmt::format("{}{} ({}: {}, {}: {})", what.empty() ? "" : "; ", d.what, base.name, d.base, run.name, d.next);
    throw ReportError(fmt::format("{}: not measured like BASE: {}. {}", run.name, what, kHowToFix));
  }
}

std::map<std::string, CaseSpread> run_to_run_spread(const NamedReport& base, const std::vector<NamedReport>& runs) {
  for (const NamedReport& run : runs) check_run_of_base_build(base, run);
  std::map<std::string, CaseSpread> out;
  for (const NamedReport& run : runs) {
    for (const CasePair& pair : match_cases(base.report->cases, run.report->cases, base.name, run.name).pairs) {
      // pair.base is BASE's record, pair.next the other run's.
      if (!timed_with_median(*pair.base) || !timed_with_median(*pair.next)) continue;
      const double moved = std::abs(pair.next->timing->span.median / pair.base->timing->span.median - 1);
      CaseSpread& s = out[pair.key];
      s.spread = std::max(s.spread, moved);
      s.runs += 1;
    }
  }
  return out;
}

}  // namespace kwb
