// `kwb compare --confirm`: the suspects re-measured on this machine's GPU, each side by its own
// build, interleaved round by round in two workers (harness/session/interleaved_runner.hpp); each
// confirmed verdict replaces the reports' (reports/compare/confirm_decision.hpp keeps both).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/progress_display.hpp"
#include "harness/record/report.hpp"
#include "reports/compare/compare_report.hpp"

namespace kwb::cli {

struct ConfirmFlags {
  bool confirm = false;
  std::string base_kwb, new_kwb;  // empty: this kwb, when the report's git SHA is this build's
  int rounds = 6;
  double case_timeout_s = 120;
  std::optional<ProgressStyle> progress;  // --progress; none: by the terminal
};

// A confirm run's rounds as the bar counts them: every suspect's rounds (a case that ends early,
// on a round not timed, counts whole), the cases so ended as failed, and the case and round that
// run next.
class RoundProgress {
 public:
  RoundProgress(std::vector<std::string> keys, int rounds);
  ProgressStatus status() const { return status_; }
  // After round `rounds_done` (from 1) of case `case_index`; `lost`: that round was not timed on a
  // side, so the case has no further round.
  ProgressStatus after_round(std::size_t case_index, std::size_t rounds_done, bool lost);

 private:
  std::string running(std::size_t case_index, std::size_t round) const;
  std::vector<std::string> keys_;
  std::size_t rounds_;
  ProgressStatus status_;
};

// Re-measures the suspects of `report` and replaces their verdicts (then the summaries). Shows
// its progress on `progress`: a bar of rounds (the case and round running), or a line per round;
// a round not timed on a side, notes and refusals are lines that stay. Returns an exit code when it refuses (2: no GPU, another build's report,
// a case the build cannot measure, settings that differ), nothing when the report was updated
// (or had no suspect).
std::optional<int> confirm_suspects(CompareReport& report, const Report& base, const Report& next,
                                    const DecisionSettings& settings, const ConfirmFlags& flags,
                                    const std::string& self_exe, ProgressDisplay& progress);

}  // namespace kwb::cli
