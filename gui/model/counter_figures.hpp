// Named figures a kernel engineer reads off raw hardware counters (sectors per request, useful
// bytes per sector, L1 and L2 hit rates, achieved occupancy, issue active, tensor-pipe active),
// each with what it means, the usual threshold and a verdict against it. Computed from one metric
// map (a kernel's values, a sample's total, or Nsight Compute's imported values), so a figure
// reads the same per kernel, in total and beside ncu's.
//
// Plain arithmetic on metric names, no ImGui: it belongs with the harness's derived figures and
// can move there whole (the review report would then read the same figures).
#pragma once

#include <limits>
#include <map>
#include <string>
#include <vector>

namespace kwb::gui {

// How a figure compares with its usual threshold; none: no threshold applies (or no value).
enum class Verdict { none, good, warn, bad };

enum class FigureUnit {
  percent,         // 0-100, "87.1%"
  per_request,     // sectors per request, "4.00"
  bytes_per_unit,  // bytes per sector, "31.9 B"
};

struct CounterFigure {
  std::string name;     // "L2 hit rate"
  std::string formula;  // from which metrics, for the tooltip
  std::string meaning;  // what it says and the usual threshold, in one or two sentences
  FigureUnit unit = FigureUnit::percent;
  double value = std::numeric_limits<double>::quiet_NaN();  // NaN: a metric it needs is absent
  Verdict verdict = Verdict::none;
  std::string verdict_text;  // "issue-bound", "scattered loads", ...; empty with no verdict
};

// Resident warps an SM holds at most on `chip` (CUPTI's chip name: 64 on GH100 and GA100, 48 on
// GA10x and AD10x); 64 when the chip is unknown.
int max_warps_per_sm(const std::string& chip);

// Every figure, always in the same order (so tables of several kernels line up), from `values`.
// `theoretical_occupancy` (0..1, 0 unknown) is the launch's, which the achieved occupancy is
// judged against.
std::vector<CounterFigure> counter_figures(const std::map<std::string, double>& values,
                                           const std::string& chip,
                                           double theoretical_occupancy = 0);

// "87.1%", "4.00", "31.9 B"; "-" for NaN.
std::string format_figure(const CounterFigure& f);

}  // namespace kwb::gui
