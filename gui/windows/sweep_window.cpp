// The sweep chart: one chosen metric (GB/s or TFLOP/s, as the review report picks per op)
// against one swept axis, a line per variant, the other axes held fixed. The charts are the
// review report's own (review::sweep_charts), so the app and the HTML never disagree; log x
// where the axis spans more than 8x.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>

#include "gui/app/layout.hpp"
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

  double x0 = 1e300, x1 = -1e300, y1 = 0;
  for (const auto& s : chart.series)
    for (const auto& [x, y] : s.points)
      x0 = std::min(x0, x), x1 = std::max(x1, x), y1 = std::max(y1, y);
  const std::string key = fmt::format("{}:{}", ui.sweep_report, chart_title(chart));
  if (ui.sweep_view.fit_key != key) {
    ui.sweep_view.x = plot::Scale::fit(x0, x1, chart.log_x, 0.04);
    ui.sweep_view.y = plot::Scale::fit(0, y1 > 0 ? y1 : 1, false, 0.06);
    ui.sweep_view.y.lo = 0;
    ui.sweep_view.fit_key = key;
  }
  plot::Plot p("##sweep", ui.sweep_view, {0, 0}, chart.axis.c_str(), chart.metric.c_str());
  std::vector<plot::LegendEntry> legend;
  int hovered_series = -1, hovered_point = -1;
  for (int s = 0; s < static_cast<int>(chart.series.size()); ++s) {
    const auto& series = chart.series[s];
    const ImU32 colour = plot::palette(s);
    p.polyline(series.points, colour);
    for (int i = 0; i < static_cast<int>(series.points.size()); ++i)
      if (p.point(series.points[i].first, series.points[i].second, colour, 3.5f, s * 100000 + i))
        hovered_series = s, hovered_point = i;
    legend.push_back({series.variant, colour});
  }
  p.legend(legend);
  p.end();
  if (p.nearest() >= 0 && hovered_series >= 0) {
    const auto& s = chart.series[hovered_series];
    ImGui::SetTooltip("%s\n%s = %.0f: %.4g %s", s.variant.c_str(), chart.axis.c_str(),
                      s.points[hovered_point].first, s.points[hovered_point].second,
                      chart.metric.c_str());
  }
  ImGui::End();
}

}  // namespace kwb::gui
