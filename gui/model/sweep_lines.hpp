// The sweep chart's lines for a chosen metric: the review report picks the sweeps (which axis,
// which slice of the other axes, review::sweep_charts) and one rate per op; the app lets the
// reader choose the metric, and needs each point's case, so that hovering names it and a click
// selects it in every view.
#pragma once

#include <string>
#include <vector>

#include "gui/model/case_table.hpp"
#include "reports/review/review_model.hpp"

namespace kwb::gui {

enum class SweepMetric { gbps, tflops, time_us, pct_roof, speedup };
inline constexpr SweepMetric kSweepMetrics[] = {SweepMetric::gbps, SweepMetric::tflops,
                                                SweepMetric::time_us, SweepMetric::pct_roof,
                                                SweepMetric::speedup};
const char* metric_name(SweepMetric m);  // "GB/s", "TFLOP/s", "time (us)", "% of roof", "speedup"
SweepMetric default_metric(const review::SweepChart& chart);  // the review report's choice

struct SweepPoint {
  double x = 0, y = 0;
  CaseRef ref;
};
struct SweepLine {
  std::string variant;
  std::vector<SweepPoint> points;  // x ascending
};

// The cases of `chart` in `cases` (report number `report`, the cases review::sweep_charts made
// the chart from): one line per series, each point's case as the chart chose it (the fastest of a
// variant's cases at that point). A case without the metric (a speedup without a baseline) is
// left out.
std::vector<SweepLine> sweep_lines(const std::vector<CaseRecord>& cases, int report,
                                   const review::SweepChart& chart, SweepMetric metric);

}  // namespace kwb::gui
