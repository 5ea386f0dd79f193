// The review report's tables as rows of formatted cells: one place that formats units, shared by
// the HTML and the Markdown sinks so that both say exactly the same thing.
#pragma once

#include <string>
#include <vector>

#include "reports/review/review_model.hpp"

namespace kwb::review {

struct Table {
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> numeric;  // per column: right-aligned
  // Per row and column: the cell's figure is beyond its usual threshold (drawn highlighted); empty
  // when no cell is.
  std::vector<std::vector<bool>> flagged = {};
};

// Title block lines: what, when, GPU, git SHA, command.
std::vector<std::pair<std::string, std::string>> title_facts(const ReviewModel& m);
// Device (driver, CUDA, CUPTI, clocks, memory) and settings (mode, flush, preset, timer, ...).
Table environment_table(const ReviewModel& m);
// Every ceiling figure: measured (with its method and date) beside the datasheet one.
Table ceilings_table(const ReviewModel& m);
Table op_table(const OpGroup& group);
Table speedup_table(const ReviewModel& m);
// What the speedup table's math columns mean, said once above it by both sinks.
inline constexpr const char* kSpeedupMathNote =
    "Math is the arithmetic each side ran in, uses the libraries it called. Where the fastest variant "
    "ran other math than the baseline (tf32 against full fp32), its speedup says so and the next row "
    "gives the fastest variant of the baseline's own math, when there is one.";
Table findings_table(const ReviewModel& m);
// An op's hardware counters: variant, dtype, shape (and where the counters came from, when some
// were imported from Nsight Compute), then one column per counter figure that any of its cases
// has, in figure_specs() order; a figure beyond its threshold is flagged.
Table counters_table(const CounterGroup& group);
// What each figure column of these groups' tables means, with its usual threshold, once each:
// "L2 hit rate: ...".
std::vector<std::string> counters_column_notes(const std::vector<CounterGroup>& groups);
// The group's figures beyond their thresholds, one line each: "fused_v1 fp32 4096x4096: useful
// bytes per load sector 16.00: ...".
std::vector<std::string> counters_attention_lines(const CounterGroup& group);
// How the counters were taken, in a sentence: sets, replay passes, cases without counters and why.
std::string counters_summary_text(const CounterSummary& summary);
// A sweep in words, for the Markdown report: "fused_v2_vec16 2900 GB/s at cols=4096 ...".
std::string sweep_summary(const SweepChart& chart);

// "1.5 MiB", "64 KiB", "0 B".
std::string format_bytes(double bytes);

}  // namespace kwb::review
