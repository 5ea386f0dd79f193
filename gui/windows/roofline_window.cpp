// The roofline: log-log, FLOP per byte against TFLOP/s; the measured and datasheet roofs (DRAM,
// L2 where measured, fp32 and tensor compute) drawn and labelled, datasheet ones dashed; one
// point per timed case the table's filters keep, coloured by op (or variant). Hover shows the
// case, a click selects it in every view; wheel zooms, drag pans, double-click refits.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "gui/app/layout.hpp"
#include "gui/model/units.hpp"
#include "gui/widgets/widgets.hpp"
#include "gui/windows/windows.hpp"

namespace kwb::gui {

namespace {

using review::RooflineCeiling;

int index_in(const std::vector<std::string>& list, const std::string& v) {
  auto it = std::find(list.begin(), list.end(), v);
  return it == list.end() ? 0 : static_cast<int>(it - list.begin());
}

// The ranges that show every point and where every roof bends (the ridge points).
void fit_view(plot::View& view, const std::vector<RooflineDot>& dots,
              const std::vector<RooflineCeiling>& roofs) {
  double x0 = 1e300, x1 = 0, y0 = 1e300, y1 = 0;
  for (const auto& d : dots)
    x0 = std::min(x0, d.intensity), x1 = std::max(x1, d.intensity), y0 = std::min(y0, d.tflops),
    y1 = std::max(y1, d.tflops);
  double top_compute = 0, low_bw = 1e300;
  for (const auto& r : roofs)
    if (r.kind == RooflineCeiling::Kind::compute)
      top_compute = std::max(top_compute, r.value);
    else
      low_bw = std::min(low_bw, r.value);
  if (top_compute > 0) y1 = std::max(y1, top_compute);
  if (top_compute > 0 && low_bw < 1e300)
    x1 = std::max(x1, top_compute * 1000 / low_bw * 2);  // past the ridge
  if (x1 == 0) x0 = 0.1, x1 = 1000, y0 = 0.1, y1 = 1000;
  view.x = plot::Scale::fit(x0, x1, true, 0.06);
  view.y = plot::Scale::fit(y0, y1, true, 0.08);
}

// `slot` counts the roofs of this kind drawn before: labels of close roofs are staggered along
// the line so that they do not print over each other.
void draw_roof(plot::Plot& p, const plot::View& view, const RooflineCeiling& r, int slot) {
  const ImU32 colour = r.label.rfind("L2", 0) == 0 ? IM_COL32(60, 120, 200, 255)
                       : r.measured                ? IM_COL32(40, 40, 40, 255)
                                                   : IM_COL32(140, 140, 140, 255);
  if (r.kind == RooflineCeiling::Kind::compute) {
    p.line(view.x.lo, r.value, view.x.hi, r.value, colour, 1.5f, !r.measured);
    const ImVec2 ts = ImGui::CalcTextSize(r.label.c_str());
    const double at = view.x.hi / std::pow(view.x.hi / view.x.lo, 0.22 * (slot % 4));
    p.text(at, r.value, r.label.c_str(), colour,
           {-ts.x - 6, r.measured ? -16.0f : 2.0f});  // datasheet below its line
    return;
  }
  // TFLOP/s = FLOP/byte * GB/s / 1000: a line of slope 1 in log-log.
  p.line(view.x.lo, view.x.lo * r.value / 1000, view.x.hi, view.x.hi * r.value / 1000, colour, 1.5f,
         !r.measured);
  // Label where the roof enters the view, a little inside.
  const double enter_x = std::max(view.x.lo, view.y.lo * 1000 / r.value);
  const double at = enter_x * std::pow(view.x.hi / view.x.lo, 0.04 + 0.09 * slot);
  p.text(at, at * r.value / 1000, r.label.c_str(), colour, {8, r.measured ? -16.0f : 2.0f});
}

}  // namespace

void draw_roofline_window(Workbench& wb, UiState& ui) {
  if (!ui.shown(View::roofline)) return;
  place_view_window(ui, View::roofline);
  if (!ImGui::Begin("Roofline", ui.show_flag(View::roofline))) {
    ImGui::End();
    return;
  }
  ImGui::Checkbox("colour by variant", &ui.colour_by_variant);
  ImGui::SameLine();
  if (ImGui::SmallButton("export PNG")) {
    const ImVec2 pos = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
    ui.export_png = PngExport{"roofline.png", pos.x, pos.y, size.x, size.y};
    wb.add_message(Message::Level::info, "roofline written to roofline.png (the working folder)");
  }
  widgets::help_marker(
      "Wheel zooms, drag pans, double-click fits. Points follow the results table's filters. "
      "Dashed roofs are the datasheet's, solid ones measured on this GPU.");

  const auto dots = wb.roofline_dots();
  const auto& roofs = wb.roofline_ceilings();
  const std::string key =
      fmt::format("{}:{}:{}", wb.reports().size(), wb.rows().size(), dots.size());
  if (ui.roofline_view.fit_key != key) {
    fit_view(ui.roofline_view, dots, roofs);
    ui.roofline_view.fit_key = key;
  }

  plot::Plot p("##roofline", ui.roofline_view, {0, 0}, "arithmetic intensity (FLOP/byte)",
               "TFLOP/s");
  int slots[2] = {0, 0};
  for (const auto& r : roofs) draw_roof(p, ui.roofline_view, r, slots[static_cast<int>(r.kind)]++);
  const auto& rows = wb.rows();
  const auto& groups = ui.colour_by_variant ? wb.variants() : wb.ops();
  for (int i = 0; i < static_cast<int>(dots.size()); ++i) {
    const TableRow& row = rows[dots[i].row];
    const int colour = index_in(groups, ui.colour_by_variant ? row.variant : row.op);
    p.point(dots[i].intensity, dots[i].tflops, plot::palette(colour, 0.85f), 4.0f, i);
  }
  for (const auto& d : dots)
    if (d.ref == wb.focus()) p.ring(d.intensity, d.tflops, IM_COL32(0, 0, 0, 255), 8.0f);
  // The legend: the groups that have a point on the chart.
  std::vector<plot::LegendEntry> legend;
  std::vector<bool> used(groups.size());
  for (const auto& d : dots)
    used[index_in(groups, ui.colour_by_variant ? rows[d.row].variant : rows[d.row].op)] = true;
  for (std::size_t g = 0; g < groups.size() && legend.size() < 14; ++g)
    if (used[g]) legend.push_back({groups[g], plot::palette(static_cast<int>(g))});
  p.legend(legend);
  const int hovered = p.nearest();
  const bool clicked = p.clicked();
  p.end();

  if (hovered >= 0) {
    const TableRow& row = rows[dots[hovered].row];
    ImGui::SetTooltip("%s\n%s  %s  %s  %s of roof  speedup %s%s%s", row.key.c_str(),
                      format_time_us(row.time_us).c_str(), format_gbps(row.gbps).c_str(),
                      format_tflops(row.tflops).c_str(), format_percent(row.pct_roof).c_str(),
                      format_ratio(row.speedup).c_str(), row.badges.any() ? "\nbadges: " : "",
                      row.badges.text().c_str());
    if (clicked) {
      wb.select(dots[hovered].ref);
      ui.scroll_table_to_focus = true;
    }
  }
  ImGui::End();
}

}  // namespace kwb::gui
