// The results table: every case of every open report, filtered by op / variant / dtype / text,
// sortable on every column, coloured by speedup and by % of roof, badges on results not to take
// at face value. A list clipper draws only the rows on screen, so 10,000 cases stay smooth.
// Click selects (the case every view shows), Ctrl-click adds, Shift-click extends; Ctrl+C or the
// button copies the marked rows as CSV.
#include <fmt/format.h>
#include <imgui.h>
#include <imgui_stdlib.h>

#include "gui/app/layout.hpp"
#include "gui/model/units.hpp"
#include "gui/widgets/widgets.hpp"
#include "gui/windows/windows.hpp"

namespace kwb::gui {

namespace {

// A combo over `values` with "all" first, its label before it; true when the choice changed.
bool filter_combo(const char* label, std::string& current, const std::vector<std::string>& values,
                  float width) {
  bool changed = false;
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(label);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(width);
  ImGui::PushID(label);
  const bool open = ImGui::BeginCombo("##filter", current.empty() ? "all" : current.c_str());
  ImGui::PopID();
  if (open) {
    if (ImGui::Selectable("all", current.empty())) current.clear(), changed = true;
    for (const std::string& v : values)
      if (ImGui::Selectable(v.c_str(), v == current)) current = v, changed = true;
    ImGui::EndCombo();
  }
  return changed;
}

void filter_bar(Workbench& wb) {
  Filters f = wb.filters();
  // With several reports open their rows mix: a report filter first.
  if (wb.reports().size() > 1) {
    std::vector<std::string> names;
    for (const auto& r : wb.reports()) names.push_back(r.name);
    filter_combo("report", f.report, names, 170);
    ImGui::SameLine();
  } else {
    f.report.clear();
  }
  filter_combo("op", f.op, wb.ops(), 150);
  ImGui::SameLine();
  filter_combo("variant", f.variant, wb.variants(), 170);
  ImGui::SameLine();
  filter_combo("dtype", f.dtype, wb.dtypes(), 70);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(180);
  ImGui::InputTextWithHint("##text", "search text", &f.text);
  wb.set_filters(f);
  // The count and the copy button on the same line where they fit, else on the next.
  const std::string count = fmt::format("{} of {} cases", wb.visible_rows().size(), wb.rows().size());
  const float needed = ImGui::CalcTextSize(count.c_str()).x + ImGui::CalcTextSize("copy CSV (?)").x + 40;
  ImGui::SameLine();
  if (ImGui::GetContentRegionAvail().x < needed) ImGui::NewLine();
  ImGui::TextDisabled("%s", count.c_str());
  ImGui::SameLine();
  ImGui::BeginDisabled(wb.marked().empty());
  if (ImGui::SmallButton("copy CSV")) ImGui::SetClipboardText(wb.marked_as_csv().c_str());
  ImGui::EndDisabled();
  widgets::help_marker(
      "Click selects a case, Ctrl-click adds one, Shift-click a range; Ctrl+C or this button "
      "copies the marked rows as CSV. Right-click a column header to show or hide columns (math, "
      "libraries used, mode, status, TFLOP/s and, with one report open, report start hidden).");
}

void number_cell(const std::string& text, ImU32 colour) { widgets::coloured_text(colour, text); }

void draw_row(Workbench& wb, UiState& ui, const TableRow& row) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  const bool marked = wb.is_marked(row.ref);
  ImGui::PushID(row.ref.report * 1000003 + row.ref.index);
  // One selectable spanning the row makes the whole row the click target.
  if (ImGui::Selectable(
          row.op.c_str(), marked,
          ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowItemOverlap)) {
    const ImGuiIO& io = ImGui::GetIO();
    if (io.KeyShift)
      wb.mark_range(row.ref);
    else
      wb.select(row.ref, io.KeyCtrl);
  }
  if (row.ref == wb.focus() && ui.scroll_table_to_focus) {
    ImGui::SetScrollHereY(0.5f);
    ui.scroll_table_to_focus = false;
  }
  if (ImGui::IsItemHovered() && !row.disposition.empty() && row.disposition != "passed")
    ImGui::SetTooltip("%s\n%s", row.key.c_str(), row.disposition.c_str());
  ImGui::PopID();
  ImGui::TableNextColumn(), ImGui::TextUnformatted(row.variant.c_str());
  ImGui::TableNextColumn(), ImGui::TextUnformatted(row.math.c_str());
  ImGui::TableNextColumn(), ImGui::TextUnformatted(row.uses.c_str());
  ImGui::TableNextColumn(), ImGui::TextUnformatted(row.dtype.c_str());
  ImGui::TableNextColumn(), ImGui::TextUnformatted(row.shape.c_str());
  ImGui::TableNextColumn(), ImGui::TextUnformatted(row.mode.c_str());
  ImGui::TableNextColumn();
  const ImU32 disposition_colour = row.disposition == "failed" ? IM_COL32(200, 30, 30, 255)
                                   : row.disposition == "skipped"
                                       ? ImGui::GetColorU32(ImGuiCol_TextDisabled)
                                       : ImGui::GetColorU32(ImGuiCol_Text);
  widgets::coloured_text(disposition_colour, row.disposition);
  const ImU32 plain = ImGui::GetColorU32(ImGuiCol_Text);
  ImGui::TableNextColumn(), number_cell(format_time_us(row.time_us), plain);
  ImGui::TableNextColumn(), number_cell(format_gbps(row.gbps), plain);
  ImGui::TableNextColumn(), number_cell(format_tflops(row.tflops), plain);
  ImGui::TableNextColumn(),
      number_cell(format_percent(row.pct_roof), widgets::efficiency_colour(row.pct_roof));
  ImGui::TableNextColumn();
  // Against a baseline of other math the cell says so: "(tf32 vs fp32)".
  number_cell(speedup_text(row), widgets::speedup_colour(row.speedup));
  ImGui::TableNextColumn();
  // The status column starts hidden: a failed or skipped case says so here too.
  if (row.disposition == "failed" || row.disposition == "skipped") {
    widgets::coloured_text(disposition_colour, row.disposition);
    if (row.badges.any()) ImGui::SameLine();
  }
  if (row.badges.any()) widgets::badges(row.badges);
  ImGui::TableNextColumn(), ImGui::TextUnformatted(row.report.c_str());
}

}  // namespace

void draw_results_table(Workbench& wb, UiState& ui) {
  if (!ui.shown(View::table)) return;
  place_view_window(ui, View::table);
  if (!ImGui::Begin("Results", ui.show_flag(View::table))) {
    ImGui::End();
    return;
  }
  filter_bar(wb);
  if (ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) && ImGui::GetIO().KeyCtrl &&
      ImGui::IsKeyPressed('C') && !wb.marked().empty())
    ImGui::SetClipboardText(wb.marked_as_csv().c_str());
  // Up and down walk the cases; the detail and the charts follow.
  if (ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) &&
      !ImGui::GetIO().WantTextInput) {
    const int step = ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_DownArrow))  ? 1
                     : ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_UpArrow))  ? -1
                     : ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_PageDown)) ? 20
                     : ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_PageUp))   ? -20
                                                                                  : 0;
    if (step) {
      wb.step_focus(step);
      ui.scroll_table_to_focus = true;
    }
  }

  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg |
                                ImGuiTableFlags_BordersOuter | ImGuiTableFlags_BordersV |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
                                ImGuiTableFlags_Resizable | ImGuiTableFlags_Reorderable |
                                ImGuiTableFlags_Hideable | ImGuiTableFlags_SizingFixedFit;
  const int columns = static_cast<int>(Column::count);
  if (ImGui::BeginTable("results", columns, flags)) {
    // The first screen shows the answer: op, variant, dtype, shape, median, GB/s, % of roof,
    // speedup and badges fit 1280 px; the rest start hidden (right-click a header for them), and a
    // long variant name is cut at its column's edge (the case detail has it whole).
    const float char_w = ImGui::CalcTextSize("m").x;
    for (int c = 0; c < columns; ++c) {
      const auto column = static_cast<Column>(c);
      ImGuiTableColumnFlags cf = ImGuiTableColumnFlags_None;
      float width = 0;
      switch (column) {
        case Column::math:
        case Column::uses:
        case Column::mode:
        case Column::disposition:
        case Column::tflops: cf |= ImGuiTableColumnFlags_DefaultHide; break;
        case Column::report:
          if (wb.reports().size() < 2) cf |= ImGuiTableColumnFlags_DefaultHide;
          break;
        case Column::variant:
          cf |= ImGuiTableColumnFlags_WidthFixed;
          width = 26 * char_w;
          break;
        case Column::shape:
          cf |= ImGuiTableColumnFlags_WidthFixed;
          width = 13 * char_w;
          break;
        default: break;
      }
      if (c >= static_cast<int>(Column::time_us) && c <= static_cast<int>(Column::speedup))
        cf |= ImGuiTableColumnFlags_PreferSortDescending;
      ImGui::TableSetupColumn(column_name(column), cf, width, static_cast<ImGuiID>(c));
    }
    ImGui::TableSetupScrollFreeze(1, 1);
    ImGui::TableHeadersRow();
    if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs && specs->SpecsDirty) {
      if (specs->SpecsCount > 0)
        wb.set_sort(static_cast<Column>(specs->Specs[0].ColumnUserID),
                    specs->Specs[0].SortDirection == ImGuiSortDirection_Ascending);
      specs->SpecsDirty = false;
    }
    const std::vector<int>& visible = wb.visible_rows();
    const auto& rows = wb.rows();
    // Bring the focused case into view (a click in a chart): the clipper then draws that row,
    // whose SetScrollHereY centres it.
    if (ui.scroll_table_to_focus) {
      const int focus_row = wb.row_of(wb.focus());
      bool found = false;
      for (std::size_t i = 0; i < visible.size() && !found; ++i)
        if (visible[i] == focus_row) {
          const float row_h = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y;
          ImGui::SetScrollY(std::max(0.0f, i * row_h - ImGui::GetWindowHeight() / 2));
          found = true;
        }
      if (!found) ui.scroll_table_to_focus = false;  // filtered out: nothing to scroll to
    }
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(visible.size()));
    while (clipper.Step())
      for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i)
        draw_row(wb, ui, rows[visible[i]]);
    ImGui::EndTable();
  }
  ImGui::End();
}

}  // namespace kwb::gui
