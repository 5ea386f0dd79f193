// The sweep chart: a chosen metric (GB/s, TFLOP/s, time, % of roof, speedup; at first the one
// the review report picks for the op) against one swept axis, a line per variant, the other axes
// held fixed. The sweeps are the review report's own (review::sweep_charts), so the app and the
// HTML show the same slices; log x where the axis spans more than 8x. Hover names the case, a
// click selects it in every view.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>

#include "gui/app/layout.hpp"
#include "gui/model/sweep_lines.hpp"
#include "gui/widgets/widgets.hpp"
#include "gui/windows/windows.hpp"

namespace kwb::gui {

namespace {

std::string chart_title(const review::SweepChart& c) {
  return fmt::format("{} {} {}: {} vs {}{}{}", c.op, c.dtype, c.mode, c.metric, c.axis,
                     c.fixed.empty() ? "" : ", ", c.fixed);
}

}  // namespace

void draw_sweep_window(Workbench& wb, UiState& ui) {
  if (!ui.shown(View::sweep)) return;
  place_view_window(ui, View::sweep);
  if (!ImGui::Begin("Sweep", ui.show_flag(View::sweep))) {
    ImGui::End();
    return;
  }
  const int reports = static_cast<int>(wb.reports().size());
  if (reports == 0) {
    ImGui::TextDisabled("Open a report to see its sweeps.");
    ImGui::End();
    return;
  }
  ui.sweep_report = std::clamp(ui.sweep_report, 0, reports - 1);
  if (reports > 1) {
    ImGui::SetNextItemWidth(200);
    if (ImGui::BeginCombo("report", wb.reports()[ui.sweep_report].name.c_str())) {
      for (int r = 0; r < reports; ++r)
        if (ImGui::Selectable(wb.reports()[r].name.c_str(), r == ui.sweep_report))
          ui.sweep_report = r, ui.sweep_chart = 0;
      ImGui::EndCombo();
    }
    ImGui::SameLine();
  }
  const auto& charts = wb.sweeps(ui.sweep_report);
  if (charts.empty()) {
    ImGui::TextDisabled(
        "No sweep in this report: no integer axis takes three or more values with the others "
        "fixed.");
    ImGui::End();
    return;
  }
  ui.sweep_chart = std::clamp(ui.sweep_chart, 0, static_cast<int>(charts.size()) - 1);
  ImGui::SetNextItemWidth(-1);
  if (ImGui::BeginCombo("##chart", chart_title(charts[ui.sweep_chart]).c_str())) {
    for (int i = 0; i < static_cast<int>(charts.size()); ++i)
      if (ImGui::Selectable(chart_title(charts[i]).c_str(), i == ui.sweep_chart))
        ui.sweep_chart = i;
    ImGui::EndCombo();
  }
  const review::SweepChart& chart = charts[ui.sweep_chart];
  // The metric: the review report's choice for this op until the reader picks another.
  const SweepMetric metric =
      ui.sweep_metric < 0 ? default_metric(chart) : static_cast<SweepMetric>(ui.sweep_metric);
  for (SweepMetric m : kSweepMetrics) {
    if (m != kSweepMetrics[0]) ImGui::SameLine();
    if (ImGui::RadioButton(metric_name(m), m == metric)) ui.sweep_metric = static_cast<int>(m);
  }
  const auto lines =
      sweep_lines(wb.reports()[ui.sweep_report].report.cases, ui.sweep_report, chart, metric);

  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = 0;
  for (const auto& l : lines)
    for (const auto& p : l.points)
      x0 = std::min(x0, p.x), x1 = std::max(x1, p.x), y0 = std::min(y0, p.y),
      y1 = std::max(y1, p.y);
  // The roof as a reference line, in the metric shown: the chart's own roof (the DRAM roof at each
  // shape's mix, or the compute roof) for its metric, 100% for "% of roof", none for the others.
  std::vector<std::pair<double, double>> roof;
  if ((metric == SweepMetric::gbps && chart.metric == "GB/s") ||
      (metric == SweepMetric::tflops && chart.metric == "TFLOP/s"))
    roof = chart.roof;
  else if (metric == SweepMetric::pct_roof && x1 >= x0)
    roof = {{x0, 100.0}, {x1, 100.0}};
  for (const auto& [x, y] : roof) y1 = std::max(y1, y);
  // Times can span decades along a sweep: log y where they do; rates start at 0.
  const bool log_y = metric == SweepMetric::time_us && y0 > 0 && y1 > 8 * y0;
  const std::string key =
      fmt::format("{}:{}:{}", ui.sweep_report, chart_title(chart), metric_name(metric));
  if (ui.sweep_view.fit_key != key) {
    ui.sweep_view.x = plot::Scale::fit(x0, x1, chart.log_x, 0.04);
    ui.sweep_view.y = log_y ? plot::Scale::fit(y0, y1, true, 0.06)
                            : plot::Scale::fit(0, y1 > 0 ? y1 : 1, false, 0.06);
    if (!log_y) ui.sweep_view.y.lo = 0;
    ui.sweep_view.fit_key = key;
  }
  // The legend beside the plot, never over its lines: as wide as the longest variant name, at most
  // 40% of the window (a longer name is cut at the window's edge).
  float legend_width = 0;
  for (const auto& line : lines) legend_width = std::max(legend_width, ImGui::CalcTextSize(line.variant.c_str()).x);
  if (!roof.empty()) legend_width = std::max(legend_width, ImGui::CalcTextSize(chart.roof_label.c_str()).x);
  const float side = std::min(legend_width + 40, 0.4f * ImGui::GetContentRegionAvail().x);
  plot::Plot p("##sweep", ui.sweep_view, {0, 0}, chart.axis.c_str(), metric_name(metric), side);
  std::vector<plot::LegendEntry> legend;
  std::vector<std::pair<int, int>> ids;  // point id -> (line, point)
  const ImU32 roof_colour = IM_COL32(128, 128, 128, 255);
  for (std::size_t i = 1; i < roof.size(); ++i)
    p.line(roof[i - 1].first, roof[i - 1].second, roof[i].first, roof[i].second, roof_colour, 1.5f, true);
  for (int s = 0; s < static_cast<int>(lines.size()); ++s) {
    const ImU32 colour = plot::palette(s);
    std::vector<std::pair<double, double>> xy;
    for (const auto& pt : lines[s].points) xy.emplace_back(pt.x, pt.y);
    p.polyline(xy, colour);
    for (int i = 0; i < static_cast<int>(lines[s].points.size()); ++i) {
      const auto& pt = lines[s].points[i];
      p.point(pt.x, pt.y, colour, 3.5f, static_cast<int>(ids.size()));
      ids.emplace_back(s, i);
      if (pt.ref == wb.focus()) p.ring(pt.x, pt.y, IM_COL32(0, 0, 0, 255), 7.0f);
    }
    legend.push_back({lines[s].variant, colour});
  }
  if (!roof.empty())
    legend.push_back({metric == SweepMetric::pct_roof ? std::string("the roof (100%)") : chart.roof_label, roof_colour, true});
  p.legend_at(legend, {p.side_min().x, p.side_min().y});
  const int hovered = p.nearest();
  const bool clicked = p.clicked();
  p.end();
  if (hovered >= 0) {
    const auto [s, i] = ids[hovered];
    const SweepPoint& pt = lines[s].points[i];
    const TableRow& row = wb.rows()[wb.row_of(pt.ref)];
    ImGui::SetTooltip("%s\n%s = %.0f: %.4g %s", row.key.c_str(), chart.axis.c_str(), pt.x, pt.y,
                      metric_name(metric));
    if (clicked) {
      wb.select(pt.ref);
      ui.scroll_table_to_focus = true;
    }
  }
  ImGui::End();
}

}  // namespace kwb::gui
