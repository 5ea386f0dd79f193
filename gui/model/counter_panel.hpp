// What the app shows of a case's hardware counters, as plain data: the case detail's Counters
// panel (each kernel's launch, the named figures and every metric per kernel and in total, with
// Nsight Compute's imported values beside kwb's and their ratio; the measured work and its
// flags) and the side-by-side of two cases' counter totals (the compare view). The windows only
// draw these, so the CPU tests check what a user reads without a window.
//
// The figures, their thresholds and verdicts, and the measured work are the harness's
// (harness/derive/counter_figures, harness/derive/measured_roofline), the very ones the review
// report tabulates: this file only arranges them in rows and columns.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "harness/derive/counter_figures.hpp"
#include "harness/record/record.hpp"

namespace kwb::gui {

inline constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

// Beside Nsight Compute, kwb's own figures are expected within 2% (counts of the same events in
// the same kernels); a ratio further from 1 is shown as a disagreement.
inline constexpr double kNcuAgreement = 0.02;

// Whether a case holds counter values to show: kwb's own (read, not unavailable) or imported ones
// (harness figure_counters: the review report's counters table has a row for exactly these).
bool has_counter_values(const CaseRecord& c);

// The sets a run is told to collect when a case has no counters: every set kwb knows.
std::string all_counter_sets();  // "memory,compute,tensor,occupancy"
// The command that measures this case again with counters: its repro line plus `--counters`.
std::string counters_command(const CaseRecord& c);

// A metric's value in its unit: bytes as bytes, durations as times, counts with SI prefixes
// ("1.07 G"), percentages as percentages; "-" for NaN.
std::string format_metric_value(const std::string& metric, double value);

// One kernel of the sample and how it was launched; "-" where the launch is not known.
struct KernelLaunchRow {
  std::string label;  // "k1": the column it has in the metric tables
  std::string name;       // as a person reads it (review::readable_kernel_name)
  std::string full_name;  // as the record keeps it, for the hover
  std::string grid, block;           // "(4096, 1, 1)"
  std::string registers;             // per thread
  std::string shared;                // per block, static + dynamic
  std::string occupancy;             // theoretical, with blocks per SM: "100% (8 blocks/SM)"
  std::string waves;                 // "3.88"
  double theoretical_occupancy = 0;  // 0..1, 0 unknown
};

// A figure's value as the review report prints it ("1.37x", "62.5%"); "-" where absent.
std::string figure_text(const std::optional<CounterFigure>& f);
// What a figure means and its usual threshold, in one line.
std::string figure_meaning(const FigureSpec& spec);

// A named figure in total, per kernel, and from Nsight Compute's values; each absent where its
// counters were not collected.
struct FigureRow {
  const FigureSpec* spec = nullptr;  // its id, label, explanation and usual threshold
  // The case's figure from kwb's own counters: the review report's cell for this case.
  std::optional<CounterFigure> total;
  std::vector<std::optional<CounterFigure>> per_kernel;  // one per kernel of the sample
  // From Nsight Compute's import; where kwb's own are missing, the review's cell is this one.
  std::optional<CounterFigure> ncu;
  double ratio = kNoValue;  // total / ncu, NaN where either is missing
};

// One metric: kwb's total, per kernel, and Nsight Compute's total of the same name.
struct MetricRow {
  std::string metric;       // the full name
  std::string explanation;  // metric_explanation(): what it counts, the usual threshold
  double total = kNoValue;
  std::vector<double> per_kernel;  // one per kernel, NaN where the kernel lacks it
  double ncu = kNoValue;
  double ratio = kNoValue;  // total / ncu
  bool disagrees() const;   // ratio further from 1 than kNcuAgreement
};

struct CounterPanel {
  // none: no counters were collected; unavailable: asked for but not readable (the reason
  // says why); collected: kwb's own counters are there.
  enum class State { none, unavailable, collected };
  State state = State::none;
  std::string source;          // "kwb (CUPTI range profiler) on GH100: memory, occupancy; ..."
  std::string unavailable;     // why kwb's counters could not be read
  std::string how_to_collect;  // the command that collects them (state none or unavailable)
  std::vector<KernelLaunchRow> kernels;
  // Nsight Compute's import (kwb profile --run): its source line, or why it has no values.
  bool has_ncu = false;
  std::string ncu_source, ncu_unavailable;
  std::vector<FigureRow>
      figures;  // only the figures with a value somewhere, in the harness's order
  std::vector<MetricRow> metrics;  // kwb's in collection order, then ncu's alone
  // The measured roofline point against the work model (Derived::measured) and its flags.
  std::optional<MeasuredWork> measured;
  double model_bytes = 0, model_flops = 0, executed_flops = 0;
  bool any() const { return state == State::collected || has_ncu; }
};

CounterPanel build_counter_panel(const CaseRecord& c);

// Two cases' counters side by side (their totals over each sample's kernels): the compare
// view's "A against B". Each side's own counters where collected, else its Nsight Compute import.
struct SideBySideRow {
  std::string name;     // a metric or a figure's name
  std::string meaning;  // its explanation
  double a = kNoValue, b = kNoValue;
  double ratio = kNoValue;     // b / a
  std::string a_text, b_text;  // formatted in the row's unit
  FigureVerdict a_verdict = FigureVerdict::none, b_verdict = FigureVerdict::none;  // figures only
};

struct CounterSideBySide {
  std::string a_source, b_source;  // what each side's values are ("kwb", "ncu") or why none
  double a_time_us = kNoValue, b_time_us = kNoValue;  // median span of the timing pass
  // Each side's case_figures: the review report's row of that case.
  std::vector<SideBySideRow> figures;
  std::vector<SideBySideRow> metrics;  // the union of both sides' metrics, a's order first
  bool comparable() const { return !metrics.empty(); }
};

CounterSideBySide counters_side_by_side(const CaseRecord& a, const CaseRecord& b);

}  // namespace kwb::gui
