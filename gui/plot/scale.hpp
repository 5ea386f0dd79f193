// An axis's mapping from data to the unit interval, and its ticks: the arithmetic half of the
// plotting module, kept free of ImGui so it is unit-tested.
//
// A log scale maps log10(v); zoom and pan act in the mapped space, so zooming a log axis keeps
// equal factors equally wide. Ticks: "nice" steps (1, 2, 5 x 10^k) on a linear axis; on a log
// axis each decade, plus 2 and 5 within it when the view spans few decades.
#pragma once

#include <string>
#include <vector>

namespace kwb::gui::plot {

struct Scale {
  double lo = 0, hi = 1;  // the visible range, in data units (both > 0 on a log scale)
  bool log = false;

  double forward(double v) const;  // data -> mapped space (v or log10 v)
  double inverse(double m) const;  // mapped space -> data
  double to_unit(double v) const;  // data -> [0, 1] over the visible range
  double from_unit(double u) const;
  // Zoom by `factor` (< 1 zooms in) around the unit position `u`, in mapped space.
  void zoom(double factor, double u);
  // Pan by a fraction of the visible span (positive moves the view toward larger values).
  void pan(double fraction);
  // Fits [min, max] of the data with a margin of `pad` of the mapped span on each side.
  static Scale fit(double min, double max, bool log, double pad = 0.05);
};

struct Tick {
  double value = 0;
  bool major = true;  // labelled
  std::string label;
};

// Ticks inside the visible range, about `target` labelled ones.
std::vector<Tick> ticks(const Scale& s, int target = 6);

}  // namespace kwb::gui::plot
