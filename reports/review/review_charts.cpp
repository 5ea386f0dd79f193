// Roofline and sweep charts: the data ranges, the roofs as clipped segments, the marks.
#include "reports/review/review_charts.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "reports/review/svg_chart.hpp"

namespace kwb::review {

namespace {

constexpr int kRoofWidth = 900, kRoofHeight = 520;
constexpr double kPlotLeft = 70, kPlotRight = 640, kPlotTop = 16, kPlotBottom = 470;

const char* roof_colour(const RooflineCeiling& c) { return c.measured ? "#333333" : "#808080"; }

}  // namespace

std::string roofline_svg(const ReviewModel& model) {
  // 1. Data ranges: every point and every ridge (where a compute roof meets the DRAM slope).
  double x_min = std::numeric_limits<double>::max(), x_max = 0;
  double y_min = std::numeric_limits<double>::max(), y_max = 0;
  for (const RooflinePoint& p : model.points) {
    x_min = std::min(x_min, p.intensity), x_max = std::max(x_max, p.intensity);
    y_min = std::min(y_min, p.tflops), y_max = std::max(y_max, p.tflops);
    if (p.measured) {
      x_min = std::min(x_min, p.measured->intensity), x_max = std::max(x_max, p.measured->intensity);
      y_min = std::min(y_min, p.measured->tflops), y_max = std::max(y_max, p.measured->tflops);
    }
  }
  double top_bandwidth = 0;
  for (const RooflineCeiling& c : model.ceilings)
    if (c.kind == RooflineCeiling::Kind::bandwidth) top_bandwidth = std::max(top_bandwidth, c.value);
  for (const RooflineCeiling& c : model.ceilings)
    if (c.kind == RooflineCeiling::Kind::compute) {
      y_max = std::max(y_max, c.value);
      if (top_bandwidth > 0) x_max = std::max(x_max, 1000 * c.value / top_bandwidth);
    }
  if (x_max <= 0) x_min = 0.1, x_max = 100;
  if (y_max <= 0) y_min = 0.1, y_max = 100;
  x_min = std::min(x_min, x_max), y_min = std::min(y_min, y_max);
  auto [x_lo, x_hi] = decade_range(x_min / 2, x_max * 2);
  auto [y_lo, y_hi] = decade_range(y_min / 2, y_max * 1.5);

  SvgChart chart(kRoofWidth, kRoofHeight, {x_lo, x_hi, true, kPlotLeft, kPlotRight},
                 {y_lo, y_hi, true, kPlotBottom, kPlotTop}, "arithmetic intensity (FLOP/byte)",
                 "TFLOP/s", "Roofline: every case against the measured and datasheet ceilings");

  // 2. The roofs. A bandwidth roof is the line y = x * GB/s / 1000, drawn from where it enters
  // the plot to where it meets the highest compute roof of its source (or leaves the plot).
  for (const RooflineCeiling& c : model.ceilings) {
    double top = 0;  // the highest compute roof of the same source; none: the plot's top
    for (const RooflineCeiling& d : model.ceilings)
      if (d.kind == RooflineCeiling::Kind::compute && d.measured == c.measured) top = std::max(top, d.value);
    if (top <= 0) top = y_hi;
    if (c.kind == RooflineCeiling::Kind::bandwidth) {
      const double x0 = std::max(x_lo, 1000 * y_lo / c.value);
      const double x1 = std::min(x_hi, 1000 * std::min(top, y_hi) / c.value);
      if (x1 <= x0) continue;
      chart.polyline({{x0, x0 * c.value / 1000}, {x1, x1 * c.value / 1000}}, roof_colour(c), !c.measured, 2);
      // Labelled mid-slope, clear of the low-intensity points crowded near the start.
      const double lx = x0 * std::pow(x1 / x0, 0.45);
      chart.label(lx, lx * c.value / 1000, c.label, roof_colour(c), 8, 10);
    } else {
      // A flat roof starts at its ridge with the DRAM slope of its source.
      double bandwidth = 0;
      for (const RooflineCeiling& d : model.ceilings)
        if (d.kind == RooflineCeiling::Kind::bandwidth && d.measured == c.measured) { bandwidth = d.value; break; }
      const double ridge = bandwidth > 0 ? 1000 * c.value / bandwidth : x_lo;
      const double x0 = std::clamp(ridge, x_lo, x_hi);
      chart.polyline({{x0, c.value}, {x_hi, c.value}}, roof_colour(c), !c.measured, 2);
      // Ended at the plot's right edge (6 px a character), so that it never runs into the legend.
      chart.label(x_hi, c.value, c.label, roof_colour(c), -(6.0 * static_cast<double>(c.label.size()) + 6), -4);
    }
  }

  // 3. The cases, coloured by op, each with its identity as a tooltip. A case with counters is
  // drawn twice: a dot at its work model's point and a ring where its counters put it (the FLOPs
  // executed over the DRAM bytes measured, at the executed FLOPs' rate), joined, so that a kernel
  // that moves more than its model shows as a ring left of its dot. Without FLOP counters the
  // model's FLOPs stand in and the join is dashed.
  bool any_measured = false;
  for (const RooflinePoint& p : model.points) {
    const auto op = std::find(model.ops.begin(), model.ops.end(), p.op) - model.ops.begin();
    const std::string colour = palette_colour(static_cast<std::size_t>(op));
    if (const auto& m = p.measured) {
      any_measured = true;
      chart.polyline({{p.intensity, p.tflops}, {m->intensity, m->tflops}}, colour, !m->flops_measured, 1.2);
      std::string flags;
      for (const std::string& flag : p.flags) flags += "; flagged: " + flag;
      chart.ring(m->intensity, m->tflops, colour,
                 fmt::format("{}: measured {:.3g} FLOP/byte (work model {:.3g}){}, {:.3g} TFLOP/s{}{}", p.case_name,
                             m->intensity, p.intensity,
                             p.traffic_ratio ? fmt::format(", traffic ratio {:.2f}", *p.traffic_ratio) : "",
                             m->tflops, m->flops_measured ? "" : " (the model's FLOPs: none counted)", flags));
    }
    chart.point(p.intensity, p.tflops, colour,
                fmt::format("{}: {:.3g} FLOP/byte, {:.3g} TFLOP/s", p.case_name, p.intensity, p.tflops));
  }
  for (std::size_t i = 0; i < model.ops.size(); ++i) chart.legend_entry(model.ops[i], palette_colour(i));
  if (any_measured) chart.legend_entry("model -> measured (counters)", "#555555", false, true);
  chart.legend_entry("measured ceiling", "#333333");
  chart.legend_entry("datasheet ceiling", "#808080", true);
  return chart.str();
}

std::string sweep_svg(const SweepChart& sweep) {
  double x_min = std::numeric_limits<double>::max(), x_max = 0, y_max = 0;
  for (const SweepSeries& s : sweep.series)
    for (const auto& [x, y] : s.points)
      x_min = std::min(x_min, x), x_max = std::max(x_max, x), y_max = std::max(y_max, y);
  if (x_max <= 0) x_min = 1, x_max = 2;
  if (y_max <= 0) y_max = 1;
  AxisScale x{x_min, x_max, sweep.log_x, 70, 520};
  if (sweep.log_x) std::tie(x.lo, x.hi) = std::pair{x_min / 1.2, x_max * 1.2};
  else if (x_max == x_min) x.hi = x_min + 1;
  const auto y_ticks = linear_ticks(0, y_max * 1.08);
  const double y_top = y_ticks.empty() ? y_max * 1.1 : std::max(y_max * 1.02, y_ticks.back());
  SvgChart chart(760, 300, x, {0, y_top, false, 256, 12},
                 sweep.axis + (sweep.fixed.empty() ? "" : "  (" + sweep.fixed + ")"), sweep.metric,
                 fmt::format("{} {} {}: {} against {}", sweep.op, sweep.dtype, sweep.mode,
                             sweep.metric, sweep.axis));
  for (std::size_t i = 0; i < sweep.series.size(); ++i) {
    const SweepSeries& s = sweep.series[i];
    chart.polyline(s.points, palette_colour(i), false, 2);
    for (std::size_t p = 0; p < s.points.size(); ++p) {
      const auto [px, py] = s.points[p];
      const std::string tunables = p < s.tunables.size() && !s.tunables[p].empty() ? " [" + s.tunables[p] + "]" : "";
      chart.point(px, py, palette_colour(i),
                  fmt::format("{}{} {}={}: {:.4g} {}", s.variant, tunables, sweep.axis, px, py, sweep.metric), 3);
    }
    chart.legend_entry(s.variant, palette_colour(i));
  }
  return chart.str();
}

}  // namespace kwb::review
