// The compare view's counters side by side: the selected case (A) against another variant of the
// same op, dtype, shape and mode, or the same case in another open report (B). The named figures
// and every metric's total over each sample's kernels, with B/A: where a fused kernel's speedup
// comes from (half the DRAM bytes, a quarter of the instructions) reads off one table.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "gui/model/counter_panel.hpp"
#include "gui/model/units.hpp"
#include "gui/widgets/widgets.hpp"
#include "gui/windows/windows.hpp"

namespace kwb::gui {

namespace {

std::string case_label(const Workbench& wb, CaseRef ref) {
  const int row = wb.row_of(ref);
  if (row < 0) return "?";
  const TableRow& r = wb.rows()[row];
  return wb.reports().size() > 1 ? r.report + ": " + r.key : r.key;
}

void rows_table(const char* id, const char* first, const std::vector<SideBySideRow>& rows,
                float height) {
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_Resizable;
  if (!ImGui::BeginTable(id, 5, flags, {0, height})) return;
  ImGui::TableSetupColumn(first);
  ImGui::TableSetupColumn("A");
  ImGui::TableSetupColumn("B");
  ImGui::TableSetupColumn("B/A");
  ImGui::TableSetupColumn("what it means", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupScrollFreeze(1, 1);
  ImGui::TableHeadersRow();
  for (const SideBySideRow& r : rows) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn(), ImGui::TextUnformatted(r.name.c_str());
    widgets::item_tooltip(r.meaning);
    ImGui::TableNextColumn();
    widgets::coloured_text(widgets::verdict_colour(r.a_verdict), r.a_text);
    ImGui::TableNextColumn();
    widgets::coloured_text(widgets::verdict_colour(r.b_verdict), r.b_text);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(std::isfinite(r.ratio) ? fmt::format("{:.3f}", r.ratio).c_str() : "-");
    ImGui::TableNextColumn(), ImGui::TextDisabled("%s", r.meaning.c_str());
  }
  ImGui::EndTable();
}

}  // namespace

void draw_counters_side_by_side(Workbench& wb, UiState& ui) {
  const CaseRecord* a = wb.find(wb.focus());
  if (!a || !has_counter_values(*a)) {
    ImGui::TextDisabled(
        "Select a case that has hardware counters (in the table, or on the roofline with "
        "\"measured\" on) to set its counters beside another variant's.");
    return;
  }
  const std::vector<CaseRef> partners = wb.counter_partners(wb.focus());
  if (partners.empty()) {
    ImGui::TextDisabled(
        "No other case of this op, dtype, shape and mode has counters: measure another variant "
        "with --counters, or open a report that has this case.");
    return;
  }
  if (std::find(partners.begin(), partners.end(), ui.counter_partner) == partners.end())
    ui.counter_partner = partners.front();
  widgets::label_value("A", case_label(wb, wb.focus()));
  ImGui::TextDisabled("B:");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(std::max(200.0f, ImGui::GetContentRegionAvail().x - 40));
  if (ImGui::BeginCombo("##counter_partner", case_label(wb, ui.counter_partner).c_str())) {
    for (const CaseRef& ref : partners) {
      ImGui::PushID(ref.report * 1000003 + ref.index);
      if (ImGui::Selectable(case_label(wb, ref).c_str(), ref == ui.counter_partner))
        ui.counter_partner = ref;
      ImGui::PopID();
    }
    ImGui::EndCombo();
  }
  const CaseRecord* b = wb.find(ui.counter_partner);
  if (!b) return;
  const CounterSideBySide s = counters_side_by_side(*a, *b);
  widgets::label_value(
      "median time",
      fmt::format("A {}, B {}{}", format_time_us(s.a_time_us), format_time_us(s.b_time_us),
                  std::isfinite(s.a_time_us) && std::isfinite(s.b_time_us)
                      ? fmt::format(" (B/A {:.3f})", s.b_time_us / s.a_time_us)
                      : ""));
  widgets::label_value("values", fmt::format("A from {}, B from {}", s.a_source, s.b_source));
  if (!s.comparable()) return;
  const float line = ImGui::GetTextLineHeightWithSpacing() + 2;
  if (!s.figures.empty())
    rows_table("side_by_side_figures", "figure", s.figures,
               (std::min<int>(s.figures.size(), 10) + 1.4f) * line);
  rows_table("side_by_side_metrics", "metric (total over the sample)", s.metrics,
             std::max(ImGui::GetContentRegionAvail().y, 6 * line));
}

}  // namespace kwb::gui
