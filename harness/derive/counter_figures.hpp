// Counter figures: what a kernel engineer reads off hardware counters ("L2 hit rate 62%", "4.0
// sectors per load request"), computed once from a metric -> value map so that the CLI's
// --columns, the review report and the app's Counters panel show the same numbers, the same
// units and the same thresholds.
//
// A figure is absent when a metric it needs was not collected (or its denominator is 0: no
// store requests, no sectors per store request). Rates are computed from counts (.sum) and
// cycles, never averaged percentages, so a sample's total gives the sample's figure.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/record/record.hpp"

namespace kwb {

// Whether a figure stands out against its usual threshold. `attention`: worth a look (a partial
// wave, a wasted half of each sector), said in CounterFigure::verdict_text; `fine`: within it;
// `none`: the figure has no threshold (an L2 hit rate depends on the kernel) or the case cannot
// be judged by it (a hot case's DRAM traffic).
enum class FigureVerdict { none, fine, attention };

struct CounterFigure {
  std::string id;           // "l2_hit_rate": stable, what `kwb run --columns` takes
  std::string label;        // "L2 hit rate"
  double value = 0;         // in `unit`; percentages as 0..100
  std::string unit;         // "%", "B", "FLOP", "x", "sectors/request", "B/sector", "waves", ...
  std::string explanation;  // what it counts and from which counters
  std::string threshold;    // the usual threshold in words; empty where none applies
  FigureVerdict verdict = FigureVerdict::none;
  std::string verdict_text;  // why, when attention
};

// What a figure needs: every metric of `all` and, when `any` is not empty, at least one of it.
// Launch figures (registers, waves, theoretical occupancy) need no metric: they come from the
// kernel's launch, recorded with any counters.
struct FigureSpec {
  std::string id, label, unit, explanation, threshold;
  std::vector<std::string> all, any;
  bool per_case = false;  // needs the case (its work model, its kernel count), not a metric map
};

// Every figure, in the order tables show them.
const std::vector<FigureSpec>& figure_specs();
const FigureSpec* find_figure_spec(const std::string& id);
std::vector<std::string> figure_ids();

// Whether `collected` (a run's metric list) holds what the figure needs.
bool figure_collectable(const FigureSpec& spec, const std::vector<std::string>& collected);

// The figures of one kernel or of a sample's total: a metric -> value map, which may also hold
// the launch values (launch_values). The per-case figures (kernels, traffic ratio, measured
// FLOPs) are not among them: see case_figures.
std::vector<CounterFigure> counter_figures(const std::map<std::string, double>& values);

// A kernel's launch as Nsight Compute names its figures: launch__registers_per_thread,
// launch__waves_per_multiprocessor and sm__maximum_warps_per_active_cycle_pct (theoretical
// occupancy, %); those not known (0) are left out.
std::map<std::string, double> launch_values(const KernelLaunch& launch);

// One kernel's values for its figures: its metrics plus its launch values (a value the kernel's
// metrics hold, as Nsight Compute's import does, is kept).
std::map<std::string, double> kernel_values(const KernelCounters& kernel);

// Whether counters hold values to show: read (not unavailable) and with at least one kernel.
bool counters_read(const std::optional<CaseCounters>& counters);

// The counters a case's figures come from: kwb's own when they were read, else those imported
// from Nsight Compute; nullptr when neither holds a kernel.
const CaseCounters* figure_counters(const CaseRecord& record);

// A sample's values for its figures: the counters' total plus the launch values of its kernels
// (duration-weighted like every non-count metric; registers the most any kernel uses).
std::map<std::string, double> case_values(const CaseCounters& counters);

// Every figure of a case: its kernel count and measured roofline (traffic ratio, measured FLOPs
// and their ratio to the model, measured intensity) first, then counter_figures of its sample's
// total; from figure_counters. Empty when the case has no counters to show.
std::vector<CounterFigure> case_figures(const CaseRecord& record);
// The same from `counters`, one of the record's own (its counters or its Nsight Compute import,
// so that both can stand side by side). The measured roofline is derived from kwb's own counters
// (derive_measured), so its figures come only with those.
std::vector<CounterFigure> case_figures(const CaseRecord& record, const CaseCounters& counters);

// The figure of `id` among `figures`; nullptr when absent.
const CounterFigure* find_figure(const std::vector<CounterFigure>& figures, const std::string& id);

// The value in its unit, short: "1.23 GiB", "62.5%", "4.00", "1.37x", "2.1 waves", "168".
std::string figure_value_text(const CounterFigure& figure);

// A number of a raw metric in a table: counts as integers, others with 4 significant digits.
std::string metric_value_text(double value);

}  // namespace kwb
