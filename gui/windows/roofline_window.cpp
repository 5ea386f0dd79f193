// The roofline: log-log, FLOP per byte against TFLOP/s; the measured and datasheet roofs (DRAM,
// L2 where measured, fp32 and tensor compute) drawn and labelled as the review's
// (reports/review/roofline_layout.hpp: one label per roof and its datasheet twin, none
// overlapping), datasheet ones dashed; one point per timed case the table's filters keep, marked
// by op (or variant): a colour, then a shape after ten; the legend beside the plot. With "measured"
// on, a case with counters is also drawn where they put it (hollow), joined to its model point,
// and ringed in red when its measured work is flagged. Hover shows the case, a click selects it
// in every view; wheel zooms, drag pans, double-click refits.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "gui/app/layout.hpp"
#include "reports/review/roofline_layout.hpp"
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

// The ranges of the review's roofline (review::fit_roofline_ranges): every point with room around
// it and every knee in view.
void fit_view(plot::View& view, const std::vector<RooflineDot>& dots,
              const std::vector<RooflineCeiling>& roofs, bool with_measured) {
  std::vector<std::pair<double, double>> xy;
  for (const auto& d : dots) {
    xy.emplace_back(d.intensity, d.tflops);
    if (with_measured && d.measured) xy.emplace_back(d.measured->intensity, d.measured->tflops);
  }
  const review::RooflineRanges r = review::fit_roofline_ranges(roofs, xy);
  view.x = plot::Scale::fit(r.x_lo, r.x_hi, true, 0);
  view.y = plot::Scale::fit(r.y_lo, r.y_hi, true, 0);
}

ImU32 roof_colour(const RooflineCeiling& r) {
  return r.measured ? IM_COL32(40, 40, 40, 255) : IM_COL32(140, 140, 140, 255);
}

// The roofs in the view as it is (zoomed or not), each label placed by the review's layout: a
// compute roof's in the side column with a leader to its line's end, a bandwidth roof's along it.
void draw_roofs(plot::Plot& p, const plot::View& view, const std::vector<RooflineCeiling>& roofs,
                float& side_bottom) {
  const review::RooflineRanges in_view{view.x.lo, view.x.hi, view.y.lo, view.y.hi};
  const auto segments = review::roof_segments(roofs, in_view);
  for (const auto& s : segments)
    p.line(s.x0, s.y0, s.x1, s.y1, roof_colour(roofs[s.roof]), 1.5f, !roofs[s.roof].measured);
  const ImVec2 a0 = p.area_min(), a1 = p.area_max(), s0 = p.side_min(), s1 = p.side_max();
  const review::RoofLabelGeometry geometry{
      [&](double x) { return static_cast<double>(p.to_screen(x, view.y.lo).x); },
      [&](double y) { return static_cast<double>(p.to_screen(view.x.lo, y).y); },
      {a0.x, a0.y, a1.x, a1.y},
      {s0.x, s0.y, s1.x, s1.y},
      [](const std::string& t) { return static_cast<double>(ImGui::CalcTextSize(t.c_str()).x); },
      static_cast<double>(ImGui::GetTextLineHeight())};
  side_bottom = s0.y;
  for (const auto& l : review::place_roof_labels(roofs, segments, geometry)) {
    const ImU32 colour = roof_colour(roofs[l.roof]);
    p.text_at({static_cast<float>(l.x), static_cast<float>(l.y)}, static_cast<float>(l.angle), l.text.c_str(), colour);
    if (l.box.x0 >= s0.x) {
      p.screen_line({static_cast<float>(l.anchor_x), static_cast<float>(l.anchor_y)},
                    {static_cast<float>(l.box.x0) - 2, static_cast<float>((l.box.y0 + l.box.y1) / 2)}, colour);
      side_bottom = std::max(side_bottom, static_cast<float>(l.box.y1));
    }
  }
}

constexpr ImU32 kFlagColour = IM_COL32(210, 30, 30, 255);

// The hover text of a measured point: where the counters put the case against the model.
std::string measured_tooltip(const TableRow& row, const RooflineDot& d, const CaseRecord& c) {
  const MeasuredWork& m = *c.derived->measured;
  std::string text = fmt::format(
      "{}\nmeasured: {:.3g} FLOP/byte (model {:.3g}), {}{}\nDRAM {} moved, {:.2f}x the model's",
      row.key, d.measured->intensity, d.intensity, format_tflops(d.measured->tflops),
      d.measured->flops_measured ? "" : " (no FLOPs counted on the pipes that run it: the model's FLOPs)",
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

  // The side column holds the compute roofs' labels and the legend, beside the plot, never on it.
  // At most 40% of the window: a narrow window cuts the labels' ends rather than the plot.
  const float side = std::min(std::max(ImGui::CalcTextSize("bf16 tensor 989 TFLOP/s (datasheet 989)").x + 16, 160.0f),
                              0.4f * ImGui::GetContentRegionAvail().x);
  plot::Plot p("##roofline", ui.roofline_view, {0, 0}, "arithmetic intensity (FLOP/byte)", "TFLOP/s", side);
  float side_bottom = 0;
  draw_roofs(p, ui.roofline_view, roofs, side_bottom);
  const auto& rows = wb.rows();
  const auto& groups = ui.colour_by_variant ? wb.variants() : wb.ops();
  const int n = static_cast<int>(dots.size());
  auto style_of = [&](const RooflineDot& d) {
    const TableRow& row = rows[d.row];
    return review::mark_style(static_cast<std::size_t>(index_in(groups, ui.colour_by_variant ? row.variant : row.op)));
  };
  auto colour_of = [&](const RooflineDot& d, float alpha) {
    return plot::palette(static_cast<int>(style_of(d).colour), alpha);
  };
  // The joins first, under every point (dashed where the model's FLOPs stand in for uncounted
  // ones); then the model points (hover ids 0..n-1) and the measured ones (n + i).
  if (show_measured)
    for (const auto& d : dots)
      if (d.measured)
        p.line(d.intensity, d.tflops, d.measured->intensity, d.measured->tflops, colour_of(d, 0.6f),
               1.2f, !d.measured->flops_measured);
  for (int i = 0; i < n; ++i)
    p.point(dots[i].intensity, dots[i].tflops, colour_of(dots[i], 0.85f), 4.0f, i,
            static_cast<int>(style_of(dots[i]).shape));
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
  using Glyph = plot::LegendEntry::Glyph;
  const float line_h = ImGui::GetTextLineHeight() + 2;
  // Rows left in the column for the groups: less the "more" row, the two roof rows and, with
  // measured points on, their three rows.
  const float other_rows = 3.0f + (show_measured ? 3.0f : 0.0f);
  const std::size_t fits =
      static_cast<std::size_t>(std::max(1.0f, (p.side_max().y - side_bottom - 12) / line_h - other_rows));
  std::size_t shown_groups = 0, used_groups = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (!used[g]) continue;
    ++used_groups;
    if (legend.size() >= fits) continue;
    const review::MarkStyle style = review::mark_style(g);
    legend.push_back({groups[g], plot::palette(static_cast<int>(style.colour)), false, Glyph::dot,
                      static_cast<int>(style.shape)});
    ++shown_groups;
  }
  if (shown_groups < used_groups)
    legend.push_back({fmt::format("... {} more (hover a point)", used_groups - shown_groups), IM_COL32(90, 90, 90, 255),
                      false, Glyph::ring});
  legend.push_back({"measured roof", IM_COL32(40, 40, 40, 255)});
  legend.push_back({"datasheet roof", IM_COL32(140, 140, 140, 255), true});
  if (show_measured) {
    const ImU32 grey = IM_COL32(90, 90, 90, 255);
    legend.push_back({"model point", grey, false, Glyph::dot});
    legend.push_back({"measured point (counters)", grey, false, Glyph::hollow_dot});
    legend.push_back({"flagged (see case detail)", kFlagColour, false, Glyph::ring});
  }
  p.legend_at(legend, {p.side_min().x, side_bottom + 12});
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
