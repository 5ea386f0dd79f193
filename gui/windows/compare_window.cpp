// Compare: two open reports side by side through `kwb compare`'s own model (compare/): per-case
// ratio NEW/BASE with its bootstrap interval, the verdict, sorted by the largest change with
// failures first; the per-op geometric means and the environment differences above. Where the
// open reports hold hardware counters, the selected case's counters beside another variant's
// (or the same case in the other report) below (counters_side_by_side.cpp).
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "gui/app/layout.hpp"
#include "gui/model/counter_panel.hpp"
#include "gui/model/units.hpp"
#include "gui/widgets/widgets.hpp"
#include "gui/windows/windows.hpp"

namespace kwb::gui {

namespace {

bool report_combo(const char* label, int& current, const Workbench& wb) {
  bool changed = false;
  ImGui::SetNextItemWidth(260);
  if (ImGui::BeginCombo(label, wb.reports()[current].name.c_str())) {
    for (int r = 0; r < static_cast<int>(wb.reports().size()); ++r) {
      ImGui::PushID(r);
      if (ImGui::Selectable(wb.reports()[r].name.c_str(), r == current))
        current = r, changed = true;
      ImGui::PopID();
    }
    ImGui::EndCombo();
  }
  return changed;
}

ImU32 outcome_colour(CaseOutcome o) {
  switch (o) {
    case CaseOutcome::failed:
    case CaseOutcome::slower: return IM_COL32(200, 40, 40, 255);
    case CaseOutcome::faster: return IM_COL32(40, 150, 60, 255);
    case CaseOutcome::ambiguous: return IM_COL32(170, 120, 20, 255);
    default: return ImGui::GetColorU32(ImGuiCol_TextDisabled);
  }
}

// BASE against NEW: the verdicts of `kwb compare`.
void draw_report_comparison(Workbench& wb, UiState& ui) {
  const int n = static_cast<int>(wb.reports().size());
  if (n < 2) {
    ImGui::TextDisabled(
        "Open two reports to compare them: BASE first, then NEW (File > Open, or both on the "
        "command line).");
    return;
  }
  ui.compare_base = std::clamp(ui.compare_base, 0, n - 1);
  ui.compare_next = std::clamp(ui.compare_next, 0, n - 1);
  report_combo("BASE", ui.compare_base, wb);
  ImGui::SameLine();
  report_combo("NEW", ui.compare_next, wb);
  std::string error;
  const CompareReport* cmp = wb.comparison(ui.compare_base, ui.compare_next, error);
  if (!cmp) {
    ImGui::TextColored({0.8f, 0.1f, 0.1f, 1}, "Cannot compare: %s", error.c_str());
    return;
  }
  for (const OpSummary& op : cmp->ops) {
    ImGui::BulletText(
        "%s: geomean NEW/BASE %s over %d cases; %d slower, %d faster, %d same, %d ambiguous, %d "
        "failed",
        op.op.c_str(), format_ratio(op.geomean_ratio).c_str(), op.ratios,
        op.counts.count(CaseOutcome::slower) ? op.counts.at(CaseOutcome::slower) : 0,
        op.counts.count(CaseOutcome::faster) ? op.counts.at(CaseOutcome::faster) : 0,
        op.counts.count(CaseOutcome::same) ? op.counts.at(CaseOutcome::same) : 0,
        op.counts.count(CaseOutcome::ambiguous) ? op.counts.at(CaseOutcome::ambiguous) : 0,
        op.counts.count(CaseOutcome::failed) ? op.counts.at(CaseOutcome::failed) : 0);
  }
  // What differs between the two runs' environments, as a banner: a GPU, driver or setting that
  // changed decides how far a ratio can be trusted, so it is never a grey footnote.
  if (!cmp->environment.empty()) {
    ImGui::PushStyleColor(ImGuiCol_ChildBg, IM_COL32(255, 236, 200, 255));
    const float line = ImGui::GetTextLineHeightWithSpacing();
    ImGui::BeginChild("environment", {0, line * (static_cast<float>(cmp->environment.size()) + 1) + 8}, true);
    ImGui::TextColored(ImVec4(0.6f, 0.3f, 0.0f, 1), "The environments differ: ratios below mix these changes in");
    for (const EnvDifference& d : cmp->environment)
      ImGui::Text("  %s: %s -> %s", d.what.c_str(), d.base.c_str(), d.next.c_str());
    ImGui::EndChild();
    ImGui::PopStyleColor();
  }
  if (!cmp->only_in_base.empty() || !cmp->only_in_new.empty())
    ImGui::TextDisabled("%d case(s) only in BASE, %d only in NEW",
                        static_cast<int>(cmp->only_in_base.size()),
                        static_cast<int>(cmp->only_in_new.size()));
  const auto ordered = by_largest_change(*cmp);
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable |
                                ImGuiTableFlags_SizingFixedFit;
  if (ImGui::BeginTable("compare", 6, flags)) {
    ImGui::TableSetupColumn("case", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("BASE");
    ImGui::TableSetupColumn("NEW");
    ImGui::TableSetupColumn("NEW/BASE");
    ImGui::TableSetupColumn("interval");
    ImGui::TableSetupColumn("verdict");
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableHeadersRow();
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(ordered.size()));
    while (clipper.Step())
      for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
        const ComparedCase& c = *ordered[i];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        // A click shows NEW's case in the detail and the table (and BASE's a Ctrl-click away).
        const CaseRef next_ref = wb.find_key(ui.compare_next, c.key);
        if (ImGui::Selectable(c.key.c_str(), next_ref.valid() && next_ref == wb.focus(),
                              ImGuiSelectableFlags_SpanAllColumns)) {
          const bool base = ImGui::GetIO().KeyCtrl;
          wb.select(base ? wb.find_key(ui.compare_base, c.key) : next_ref);
          ui.scroll_table_to_focus = true;
        }
        if (ImGui::IsItemHovered() && !c.note.empty()) ImGui::SetTooltip("%s", c.note.c_str());
        ImGui::TableNextColumn(),
            ImGui::TextUnformatted(
                format_time_us(c.timed() ? c.decision.base_median_us : NAN).c_str());
        ImGui::TableNextColumn(),
            ImGui::TextUnformatted(
                format_time_us(c.timed() ? c.decision.new_median_us : NAN).c_str());
        const double ratio = c.has_ratio() ? c.decision.ratio.ratio : NAN;
        ImGui::TableNextColumn(),
            widgets::coloured_text(outcome_colour(c.outcome), format_ratio(ratio));
        ImGui::TableNextColumn();
        if (c.has_ratio() && std::isfinite(c.decision.ratio.lo))
          ImGui::Text("[%.3f, %.3f]", c.decision.ratio.lo, c.decision.ratio.hi);
        ImGui::TableNextColumn(),
            widgets::coloured_text(outcome_colour(c.outcome), c.outcome_label());
      }
    ImGui::EndTable();
  }
}

}  // namespace

void draw_compare_window(Workbench& wb, UiState& ui) {
  if (!ui.shown(View::compare)) return;
  place_view_window(ui, View::compare);
  if (!ImGui::Begin("Compare", ui.show_flag(View::compare))) {
    ImGui::End();
    return;
  }
  // A headless screenshot with nothing selected shows the first case that has counters.
  if (ui.solo && !wb.focus().valid())
    for (int i : wb.visible_rows())
      if (const CaseRecord* c = wb.find(wb.rows()[i].ref); c && has_counter_values(*c)) {
        wb.select(wb.rows()[i].ref);
        break;
      }
  const bool counters = wb.cases_with_counters() > 0;
  // The report comparison's table fills what it is given: with counters below, under half.
  const float reports_height = !counters ? 0
                               : wb.reports().size() < 2
                                   ? 2.5f * ImGui::GetTextLineHeightWithSpacing()
                                   : ImGui::GetContentRegionAvail().y * 0.45f;
  if (ImGui::BeginChild("##reports", {0, reports_height})) draw_report_comparison(wb, ui);
  ImGui::EndChild();
  if (counters && ImGui::CollapsingHeader("Counters side by side", ImGuiTreeNodeFlags_DefaultOpen))
    draw_counters_side_by_side(wb, ui);
  ImGui::End();
}

}  // namespace kwb::gui
