// The selection table as JSON (schema kwb.selection/1), for a training stack to load: per
// (op, dtype, mode, shape) the variant to launch, its configuration and time, and how sure.
//
//   {"schema": "kwb.selection/1", "device": "NVIDIA H100 80GB HBM3", "driver": "580.95.05",
//    "source_report": "results/report.json", "git_sha": "9622eca...", "min_margin_pct": 1.0,
//    "entries": [{"op", "dtype", "mode", "shape": {"rows": 16384, "cols": 4096}, "shape_compact",
//                 "winner": {"variant", "tunables": {"block": 256}, "median_us", "case"},
//                 "runner_up": {...} or null, "margin_pct" (null without a runner-up), "clear",
//                 "noise_rule", "verdict_reason", "baseline_variant", "baseline_us" and "speedup_vs_baseline" (null without a
//                 baseline), "candidates", "excluded": {"failed": 1}, "excluded_reasons": {...}}],
//    "unselected": [{"op", "dtype", "mode", "shape", "shape_compact", "excluded", "excluded_reasons"}]}
//
// Entries keep the plan order of each group's first case, and object keys their written order
// (nlohmann::ordered_json), so the same report always gives the same bytes.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "reports/select/selection.hpp"

namespace kwb {

inline constexpr const char* kSelectionSchema = "kwb.selection/1";

// Where a selection came from: the report's GPU, driver and git SHA, and the file's path.
struct SelectionSource {
  std::string device, driver, git_sha, source_report;
  double min_margin = 0.01;  // the fraction the verdicts used
  bool deterministic_only = false;  // SelectSettings::deterministic_only: varying variants were no candidates
};
SelectionSource selection_source(const RunInfo& run, const std::string& report_path, double min_margin);

nlohmann::ordered_json selection_to_json(const select::Selection& selection, const SelectionSource& source);

// Pretty-printed, replaced atomically (harness/record/atomic_file.hpp).
void write_selection_json(const std::filesystem::path& path, const select::Selection& selection,
                          const SelectionSource& source);

}  // namespace kwb
