// Sweep lines per metric, with their cases (see sweep_lines.hpp).
#include "gui/model/sweep_lines.hpp"

#include <algorithm>
#include <cmath>

namespace kwb::gui {

namespace {

// The other axes and tunables of `c` when `axis` is swept, written as review::sweep_charts
// writes SweepChart::fixed, so that the two select the same cases.
std::string others_of(const CaseRecord& c, const std::string& axis) {
  std::string others;
  for (const auto& [name, v] : c.shape.axes)
    if (name != axis) others += (others.empty() ? "" : ",") + name + "=" + v.text();
  if (!c.tunables.empty()) others += (others.empty() ? "" : ",") + to_assignments(c.tunables);
  return others;
}

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
  for (int i = 0; i < static_cast<int>(cases.size()); ++i) {
    const CaseRecord& c = cases[i];
    if (!c.timing || !c.derived || c.disposition == Disposition::failed) continue;
    if (c.op != chart.op || to_string(c.dtype) != chart.dtype ||
        to_string(c.timing->mode) != chart.mode)
      continue;
    const auto x = c.shape.find(chart.axis);
    if (!x || others_of(c, chart.axis) != chart.fixed) continue;
    const double y = metric_of(c, metric);
    if (!std::isfinite(y)) continue;
    auto it = std::find_if(lines.begin(), lines.end(),
                           [&](const SweepLine& l) { return l.variant == c.variant; });
    if (it == lines.end()) it = lines.insert(lines.end(), {c.variant, {}});
    it->points.push_back({static_cast<double>(*x), y, {report, i}});
  }
  for (auto& l : lines)
    std::sort(l.points.begin(), l.points.end(),
              [](const SweepPoint& a, const SweepPoint& b) { return a.x < b.x; });
  return lines;
}

}  // namespace kwb::gui
