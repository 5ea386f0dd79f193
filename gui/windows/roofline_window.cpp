// The roofline: log-log, FLOP per byte against TFLOP/s; the measured and datasheet roofs (DRAM,
// L2 where measured, fp32 and tensor compute) drawn and labelled, datasheet ones dashed; one
// point per timed case the table's filters keep, coloured by op (or variant). With "measured"
// on, a case with counters is also drawn where they put it (hollow), joined to its model point,
// and ringed in red when its measured work is flagged. Hover shows the case, a click selects it
// in every view; wheel zooms, drag pans, double-click refits.
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
              const std::vector<RooflineCeiling>& roofs, bool with_measured) {
  double x0 = 1e300, x1 = 0, y0 = 1e300, y1 = 0;
  auto take = [&](double x, double y) {
    x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
  };
  for (const auto& d : dots) {
    take(d.intensity, d.tflops);
    if (with_measured && d.measured) take(d.measured->intensity, d.measured->tflops);
  }
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

constexpr ImU32 kFlagColour = IM_COL32(210, 30, 30, 255);

// The hover text of a measured point: where the counters put the case against the model.
std::string measured_tooltip(const TableRow& row, const RooflineDot& d, const CaseRecord& c) {
  const MeasuredWork& m = *c.derived->measured;
  std::string text = fmt::format(
      "{}\nmeasured: {:.3g} FLOP/byte (model {:.3g}), {}{}\nDRAM {} moved, {:.2f}x the model's",
      row.key, d.measured->intensity, d.intensity, format_tflops(d.measured->tflops),
      d.measured->flops_measured ? "" : " (FLOP counters not collected: the model's FLOPs)",
      format_bytes(static_cast<std::int64_t>(m.dram_bytes)), m.traffic_ratio);
  if (m.flop_ratio) text += fmt::format("\nFLOPs executed {:.3g}x the model's", *m.flop_ratio);
  for (const auto& flag : m.flags) text += "\nflag: " + flag;
  return text;
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
  const bool any_measured =
      std::any_of(dots.begin(), dots.end(), [](const RooflineDot& d) { return d.measured; });
  if (any_measured) {
    ImGui::SameLine();
    ImGui::Checkbox("measured", &ui.roofline_measured);
    widgets::help_marker(
        "Cases with hardware counters (kwb run --counters) also at their measured point (hollow): "
        "the FLOPs the pipes executed over the DRAM bytes really moved, joined to the model point. "
        "A point left of its model point moves more bytes than the work model; red rings mark "
        "flagged cases (the case detail lists why). Without FLOP counters the model's FLOPs "
        "stand in and the point moves sideways only.");
  }
  const bool show_measured = any_measured && ui.roofline_measured;
  const std::string key =
      fmt::format("{}:{}:{}:{}", wb.reports().size(), wb.rows().size(), dots.size(), show_measured);
  if (ui.roofline_view.fit_key != key) {
    fit_view(ui.roofline_view, dots, roofs, show_measured);
    ui.roofline_view.fit_key = key;
  }

  plot::Plot p("##roofline", ui.roofline_view, {0, 0}, "arithmetic intensity (FLOP/byte)",
               "TFLOP/s");
  int slots[2] = {0, 0};
  for (const auto& r : roofs) draw_roof(p, ui.roofline_view, r, slots[static_cast<int>(r.kind)]++);
  const auto& rows = wb.rows();
  const auto& groups = ui.colour_by_variant ? wb.variants() : wb.ops();
  const int n = static_cast<int>(dots.size());
  auto colour_of = [&](const RooflineDot& d, float alpha) {
    const TableRow& row = rows[d.row];
    return plot::palette(index_in(groups, ui.colour_by_variant ? row.variant : row.op), alpha);
  };
  // The joins first, under every point (dashed where the model's FLOPs stand in for uncounted
  // ones); then the model points (hover ids 0..n-1) and the measured ones (n + i).
  if (show_measured)
    for (const auto& d : dots)
      if (d.measured)
        p.line(d.intensity, d.tflops, d.measured->intensity, d.measured->tflops, colour_of(d, 0.6f),
               1.2f, !d.measured->flops_measured);
  for (int i = 0; i < n; ++i)
    p.point(dots[i].intensity, dots[i].tflops, colour_of(dots[i], 0.85f), 4.0f, i);
  if (show_measured)
    for (int i = 0; i < n; ++i) {
      const auto& m = dots[i].measured;
      if (!m) continue;
      p.hollow_point(m->intensity, m->tflops, colour_of(dots[i], 1.0f), 4.5f, n + i);
      if (m->flagged) p.ring(m->intensity, m->tflops, kFlagColour, 8.0f);
    }
  for (const auto& d : dots)
    if (d.ref == wb.focus()) {
      p.ring(d.intensity, d.tflops, IM_COL32(0, 0, 0, 255), 8.0f);
      if (show_measured && d.measured)
        p.ring(d.measured->intensity, d.measured->tflops, IM_COL32(0, 0, 0, 255), 11.0f);
    }
  // The legend: the groups that have a point on the chart.
  std::vector<plot::LegendEntry> legend;
  std::vector<bool> used(groups.size());
  for (const auto& d : dots)
    used[index_in(groups, ui.colour_by_variant ? rows[d.row].variant : rows[d.row].op)] = true;
  for (std::size_t g = 0; g < groups.size() && legend.size() < 14; ++g)
    if (used[g]) legend.push_back({groups[g], plot::palette(static_cast<int>(g))});
  if (show_measured) {
    using Glyph = plot::LegendEntry::Glyph;
    const ImU32 grey = IM_COL32(90, 90, 90, 255);
    legend.push_back({"model point", grey, false, Glyph::dot});
    legend.push_back({"measured point (counters)", grey, false, Glyph::hollow_dot});
    legend.push_back({"flagged (see case detail)", kFlagColour, false, Glyph::ring});
  }
  p.legend(legend);
  const int hovered = p.nearest();
  const bool clicked = p.clicked();
  p.end();

  if (hovered >= n) {  // a measured point
    const RooflineDot& d = dots[hovered - n];
    if (const CaseRecord* c = wb.find(d.ref))
      ImGui::SetTooltip("%s", measured_tooltip(rows[d.row], d, *c).c_str());
    if (clicked) {
      wb.select(d.ref);
      ui.scroll_table_to_focus = true;
    }
  } else if (hovered >= 0) {
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
