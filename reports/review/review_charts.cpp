// Roofline and sweep charts: the data ranges, the roofs as clipped segments, the marks.
#include "reports/review/review_charts.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "reports/review/roofline_layout.hpp"
#include "reports/review/svg_chart.hpp"

namespace kwb::review {

namespace {

// The review page is about 1400 px wide and the chart scales to it: the plot, then a column for
// the compute roofs' labels and the legend.
constexpr double kRoofWidth = 1200, kMinRoofHeight = 560;
constexpr double kPlotLeft = 70, kPlotRight = 850, kPlotTop = 16, kPlotBottom = 500;
constexpr double kSideLeft = 862, kSideRight = 1195;
constexpr double kCharWidth = 6.0, kLineHeight = 13;  // 10.5 px text

const char* roof_colour(const RooflineCeiling& c) { return c.measured ? "#333333" : "#808080"; }

}  // namespace

std::string roofline_svg(const ReviewModel& model) {
  // 1. Ranges fitted to the points (model and measured) with every knee in view; the roofs.
  std::vector<std::pair<double, double>> xy;
  for (const RooflinePoint& p : model.points) {
    xy.emplace_back(p.intensity, p.tflops);
    if (p.measured) xy.emplace_back(p.measured->intensity, p.measured->tflops);
  }
  const RooflineRanges ranges = fit_roofline_ranges(model.ceilings, xy);
  const AxisScale x{ranges.x_lo, ranges.x_hi, true, kPlotLeft, kPlotRight};
  const AxisScale y{ranges.y_lo, ranges.y_hi, true, kPlotBottom, kPlotTop};
  const std::vector<RoofSegment> segments = roof_segments(model.ceilings, ranges);
  const RoofLabelGeometry geometry{[&](double v) { return x.to_px(v); }, [&](double v) { return y.to_px(v); },
                                   {kPlotLeft, kPlotTop, kPlotRight, kPlotBottom},
                                   {kSideLeft, kPlotTop, kSideRight, kPlotBottom},
                                   [](const std::string& t) { return kCharWidth * static_cast<double>(t.size()); },
                                   kLineHeight};
  const std::vector<RoofLabel> labels = place_roof_labels(model.ceilings, segments, geometry);

  // The legend below the last label of the side column.
  double legend_top = kPlotTop + 8;
  for (const RoofLabel& l : labels)
    if (l.box.x0 >= kSideLeft) legend_top = std::max(legend_top, l.box.y1 + 20);
  const std::size_t legend_rows = model.ops.size() + 3;
  const double height = std::max(kMinRoofHeight, legend_top + 16.0 * static_cast<double>(legend_rows) + 10);

  SvgChart chart(static_cast<int>(kRoofWidth), static_cast<int>(height), x, y, "arithmetic intensity (FLOP/byte)",
                 "TFLOP/s", "Roofline: every case against the measured and datasheet ceilings");
  chart.fill_width();
  chart.legend_at(kSideLeft, legend_top);

  // 2. The roofs, measured solid and datasheet dashed, each label beside its line (a compute
  //    roof's right of the plot, joined to its line's end by a leader; a bandwidth roof's along it).
  for (const RoofSegment& sgm : segments) {
    const RooflineCeiling& c = model.ceilings[sgm.roof];
    chart.polyline({{sgm.x0, sgm.y0}, {sgm.x1, sgm.y1}}, roof_colour(c), !c.measured, 2);
  }
  for (const RoofLabel& l : labels) {
    const RooflineCeiling& c = model.ceilings[l.roof];
    chart.placed_text(l.x, l.y, l.angle * 180 / std::acos(-1.0), l.text, roof_colour(c));
    if (l.box.x0 >= kSideLeft)
      chart.pixel_line(l.anchor_x, l.anchor_y, l.box.x0 - 2, (l.box.y0 + l.box.y1) / 2, roof_colour(c), !c.measured);
  }

  // 3. The cases, marked by op (a colour, then a shape after ten), each with its identity as a
  // tooltip. A case with counters is drawn twice: its mark at its work model's point and a ring
  // where its counters put it (the FLOPs executed over the DRAM bytes measured, at the executed
  // FLOPs' rate), joined, so that a kernel that moves more than its model shows as a ring left of
  // its mark. Without FLOP counters the model's FLOPs stand in and the join is dashed.
  bool any_measured = false;
  for (const RooflinePoint& p : model.points) {
    const auto op = static_cast<std::size_t>(std::find(model.ops.begin(), model.ops.end(), p.op) - model.ops.begin());
    const MarkStyle style = mark_style(op);
    const std::string colour = palette_colour(style.colour);
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
    chart.mark(p.intensity, p.tflops, colour, static_cast<int>(style.shape),
               fmt::format("{}: {:.3g} FLOP/byte, {:.3g} TFLOP/s", p.case_name, p.intensity, p.tflops));
  }
  for (std::size_t i = 0; i < model.ops.size(); ++i) {
    const MarkStyle style = mark_style(i);
    chart.legend_mark(model.ops[i], palette_colour(style.colour), static_cast<int>(style.shape));
  }
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
  for (const auto& [x, y] : sweep.roof) y_max = std::max(y_max, y);  // the roof in view
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
  if (!sweep.roof.empty()) {
    chart.polyline(sweep.roof, "#808080", true, 1.5);
    for (const auto& [x, y] : sweep.roof)
      chart.point(x, y, "#808080", fmt::format("{} at {}={}: {:.4g} {}", sweep.roof_label, sweep.axis, x, y, sweep.metric), 2);
  }
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
  if (!sweep.roof.empty()) chart.legend_entry(sweep.roof_label, "#808080", true);
  return chart.str();
}

}  // namespace kwb::review
