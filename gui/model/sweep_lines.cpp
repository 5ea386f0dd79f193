// Sweep lines per metric, with their cases (see sweep_lines.hpp).
#include "gui/model/sweep_lines.hpp"

#include <algorithm>
#include <cmath>

namespace kwb::gui {

namespace {

double metric_of(const CaseRecord& c, SweepMetric m) {
  const Derived& d = *c.derived;
  switch (m) {
    case SweepMetric::gbps: return d.bandwidth_gbps;
    case SweepMetric::tflops: return d.tflops;
    case SweepMetric::time_us: return c.timing->span.median;
    case SweepMetric::pct_roof: return d.pct_of_roofline;
    case SweepMetric::speedup: return d.speedup_vs_baseline.value_or(NAN);
  }
  return NAN;
}

}  // namespace

const char* metric_name(SweepMetric m) {
  switch (m) {
    case SweepMetric::gbps: return "GB/s";
    case SweepMetric::tflops: return "TFLOP/s";
    case SweepMetric::time_us: return "time (us)";
    case SweepMetric::pct_roof: return "% of roof";
    case SweepMetric::speedup: return "speedup";
  }
  return "?";
}

SweepMetric default_metric(const review::SweepChart& chart) {
  return chart.metric == "TFLOP/s" ? SweepMetric::tflops : SweepMetric::gbps;
}

std::vector<SweepLine> sweep_lines(const std::vector<CaseRecord>& cases, int report,
                                   const review::SweepChart& chart, SweepMetric metric) {
  std::vector<SweepLine> lines;
  for (const review::SweepSeries& series : chart.series) {
    SweepLine line{series.variant, {}};
    for (std::size_t p = 0; p < series.cases.size(); ++p) {
      const std::size_t i = series.cases[p];
      if (i >= cases.size()) continue;  // a chart made from other cases: nothing to point at
      const double y = metric_of(cases[i], metric);
      if (std::isfinite(y)) line.points.push_back({series.points[p].first, y, {report, static_cast<int>(i)}});
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace kwb::gui
