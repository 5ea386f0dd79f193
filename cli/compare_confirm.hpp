// `kwb compare --confirm`: the suspects re-measured on this machine's GPU, each side by its own
// build, interleaved round by round in two workers (harness/session/interleaved_runner.hpp); each
// confirmed verdict replaces the reports' (reports/compare/confirm_decision.hpp keeps both).
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "harness/record/report.hpp"
#include "reports/compare/compare_report.hpp"

namespace kwb::cli {

struct ConfirmFlags {
  bool confirm = false;
  std::string base_kwb, new_kwb;  // empty: this kwb, when the report's git SHA is this build's
  int rounds = 6;
  double case_timeout_s = 120;
};

// Re-measures the suspects of `report` and replaces their verdicts (then the summaries). Prints
// progress to `progress`. Returns an exit code when it refuses (2: no GPU, another build's report,
// a case the build cannot measure, settings that differ), nothing when the report was updated
// (or had no suspect).
std::optional<int> confirm_suspects(CompareReport& report, const Report& base, const Report& next,
                                    const DecisionSettings& settings, const ConfirmFlags& flags,
                                    const std::string& self_exe, std::ostream& progress);

}  // namespace kwb::cli
