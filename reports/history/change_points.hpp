// Change points in a case's history: which runs moved the median beyond the noise of the runs
// before them. Pure (no SQL, no I/O), so the rule is tested on synthetic series.
//
// The rule, for run i of a series of medians in time order:
//   reference = the median of the previous `window` runs (k = 5), counted only since the last
//               change point, and only when there are at least `min_history` (3) of them;
//   noise     = 1.4826 * MAD of those runs / reference (the MAD scaled to a standard deviation,
//               relative), robust to one odd run in the window;
//   run i is a CHANGE when |median_i / reference - 1| > max(min_relative (3%), 3 * noise).
// Restarting the window at a change point flags a step once, at the step, rather than at each of
// the next runs while the window still holds the old level. A single outlier is flagged at its
// own run (nothing can tell it from a step until later runs come), and the run after it, back at
// the old level, is not flagged: the window restarts at the outlier and holds too few runs.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace kwb::history {

struct ChangeRule {
  std::size_t window = 5;       // k: previous runs the reference is taken over
  std::size_t min_history = 3;  // fewer runs since the last change point: no verdict
  double min_relative = 0.03;   // changes below 3% are never flagged
  double noise_factor = 3.0;    // ... nor below 3 x the window's relative noise
};

struct TrendStep {
  double change_vs_previous = 0;  // median_i / median_{i-1} - 1; 0 for the first run
  bool judged = false;            // enough history for a verdict
  double reference = 0;           // the window's median (judged only)
  double threshold = 0;           // the relative change that counts here (judged only)
  bool change = false;            // a change point
};

// medians: positive, in time order. One step per median.
std::vector<TrendStep> find_change_points(std::span<const double> medians, const ChangeRule& rule = {});

// The median of `values` (the mean of the two middle ones for an even count); 0 when empty.
double median_of(std::vector<double> values);

}  // namespace kwb::history
