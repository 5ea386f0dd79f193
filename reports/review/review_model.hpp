// The review report's content as plain structs: what the HTML and Markdown sinks draw and tabulate.
//
// A report (run info + case records) goes in; out come the roofline (its ceilings and one point
// per timed case), one table per op, the speedup rows, one sweep chart per swept axis, and the
// findings a reviewer must see (failures, rates above a ceiling, throttled or noisy cases). No
// I/O and no formatting beyond names, so every decision here is unit-tested on hand-made records.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/derive/counter_figures.hpp"
#include "harness/derive/measured_roofline.hpp"
#include "harness/record/speedup_summary.hpp"
#include "harness/record/record.hpp"
#include "reports/select/selection.hpp"

namespace kwb::review {

// One roof of the roofline. A bandwidth roof is a slope (TFLOP/s = intensity * GB/s / 1000); a
// compute roof is flat.
struct RooflineCeiling {
  enum class Kind { bandwidth, compute };
  Kind kind = Kind::bandwidth;
  std::string label;     // "DRAM copy 3032 GB/s (measured)", "bf16 tensor 989 TFLOP/s (datasheet)"
  std::string name;        // "DRAM copy", "bf16 tensor": what a measured roof and its datasheet twin share
  std::string value_text;  // "3032 GB/s"
  double value = 0;      // GB/s for bandwidth, TFLOP/s for compute
  bool measured = true;  // false: datasheet (drawn dashed)
};

// One timed case on the roofline.
struct RooflinePoint {
  std::string op;
  std::string case_name;  // the case identity (nvtx_range)
  double intensity = 0;   // FLOP per byte
  double tflops = 0;
  // Where its counters put it (harness/derive/measured_roofline: the point the app draws too);
  // absent without measured DRAM bytes.
  std::optional<MeasuredPoint> measured;
  std::optional<double> traffic_ratio;  // measured DRAM bytes / the model's, for the tooltip
  std::vector<std::string> flags;       // the measured work's flags, for the tooltip
};

// One row of an op's table: a case, with the figures a reviewer compares.
struct CaseRow {
  std::string variant, dtype, shape, mode;
  std::string math;  // the arithmetic it ran in ("tf32"); empty: not recorded (older reports)
  std::string uses;  // the libraries it called ("cuBLASLt"); empty: only the project's kernels
  std::string disposition;   // "passed", "failed: <reason>", "skipped: <reason>"
  std::string verification;  // "full, max rel err 2.5e-07", "sampled ...", "not verified"
  bool timed = false;
  double median_us = 0, gbps = 0, tflops = 0, pct_of_roofline = 0, pct_of_copy = 0;
  double speedup = 0;  // 0 when there is no baseline to compare with
  std::string speedup_math;  // "tf32 vs fp32" when the baseline ran other math; empty: like with like
  std::string flags;   // "throttled", "noisy", "hot", comma-separated; empty when clean
};

struct OpGroup {
  std::string op;
  bool compute_bound = false;  // most timed cases are under the compute roof
  std::vector<CaseRow> rows;
};

// A line chart of one op's rate against one swept axis, the other axes held fixed. Tunables are
// not part of the slice: every variant of the op is a series, and where a variant has several
// cases at one point (a tuning sweep's settings), the fastest (lowest median) is plotted.
struct SweepSeries {
  std::string variant;
  std::vector<std::pair<double, double>> points;  // (axis value, rate), axis ascending
  std::vector<std::size_t> cases;                 // per point: its case's index in sweep_charts' input
  std::vector<std::string> tunables;              // per point: its case's tunables ("" when none)
};
struct SweepChart {
  std::string op, dtype, mode;
  std::string axis;     // the swept axis: "cols"
  std::string fixed;    // the other axes: "rows=16384"; empty when there are none
  std::string metric;   // "GB/s" or "TFLOP/s"
  bool log_x = false;   // the axis spans more than 8x
  std::vector<SweepSeries> series;  // one per variant
  // The roof of each swept shape in the chart's metric, x ascending: for GB/s the DRAM roof at the
  // case's read/write mix (cold cases beyond the L2; none for hot ones), for TFLOP/s the compute
  // roof. Empty when no case of the slice has one.
  std::vector<std::pair<double, double>> roof;
  std::string roof_label;  // "DRAM roof at each shape's read/write mix", "compute roof"
};

// One case's hardware-counter figures (harness/derive/counter_figures.hpp), for its op's
// counters table.
struct CounterRow {
  std::string case_name;  // the identity
  std::string variant, dtype, shape;
  std::string source;  // "cupti" (kwb's own) or "ncu" (imported from Nsight Compute)
  std::vector<CounterFigure> figures;
};
struct CounterGroup {
  std::string op;
  std::vector<CounterRow> rows;  // the op's cases with counters, in report order
};
// How the counters were taken, for the section's note.
struct CounterSummary {
  int cases_asked = 0;     // cases that carry counters (read or not)
  int cases_read = 0;      // cases with counter values
  std::vector<std::string> sets;  // union over the cases, first-seen order
  int min_passes = 0, max_passes = 0;
  std::vector<std::pair<std::string, int>> unavailable;  // why none were read, and for how many cases
};

// Something a reviewer must not miss.
struct Finding {
  // "failed", "skipped", "above ceiling", "throttled", "noisy", "measured roofline" (a flag of
  // the case's counters against its work model: extra DRAM traffic, other FLOPs)
  std::string kind;
  std::string case_name;  // the identity
  std::string detail;
};

struct ReviewModel {
  RunInfo run;
  std::vector<RooflineCeiling> ceilings;  // measured first, then datasheet
  std::vector<RooflinePoint> points;
  std::vector<std::string> ops;           // in the order the records first name them
  std::vector<OpGroup> groups;            // one per op, same order
  std::vector<SpeedupRow> speedups;
  select::Selection selection;            // fastest verified variant per (op, dtype, shape, mode)
  std::vector<SweepChart> sweeps;
  std::vector<CounterGroup> counters;     // one per op with counters, in op order
  CounterSummary counter_summary;
  std::vector<Finding> findings;
  int cases_total = 0, cases_failed = 0, cases_skipped = 0;
};

ReviewModel build_review_model(const RunInfo& run, const std::vector<CaseRecord>& cases);

// The roofs a Ceilings set contributes (DRAM copy, L2 copy when measured, fp32, tensor per dtype).
std::vector<RooflineCeiling> roofline_ceilings(const Ceilings& c, bool measured);

// The sweep charts of these cases: for each (op, dtype, mode) and integer axis with at least
// three values among cases whose other axes agree, one chart over the largest such slice.
std::vector<SweepChart> sweep_charts(const std::vector<CaseRecord>& cases);

}  // namespace kwb::review
