// The case detail's Counters panel: what the hardware counters say of the selected case. The
// measured work against the work model (DRAM bytes, FLOPs, intensity) and its flags; each
// kernel's launch (grid, block, registers, shared memory, theoretical occupancy, waves); the
// named figures with their usual thresholds; every metric per kernel and in total, each
// explained on hover, with Nsight Compute's imported values and the ratio beside kwb's. A case
// without counters says how to collect them; one whose counters could not be read says why.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "gui/model/counter_panel.hpp"
#include "gui/model/units.hpp"
#include "gui/widgets/widgets.hpp"
#include "gui/windows/windows.hpp"

namespace kwb::gui {

namespace {

// A baseline of 30 launches still fits; beyond this the per-kernel columns stop (the total and
// the first kernels stay readable) and the table says how many were left out.
constexpr int kMaxKernelColumns = 32;
constexpr ImU32 kFlagColour = IM_COL32(200, 40, 40, 255);
constexpr ImU32 kDisagreeColour = IM_COL32(190, 120, 10, 255);

const ImGuiTableFlags kTableFlags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter |
                                    ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollX |
                                    ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit |
                                    ImGuiTableFlags_Resizable;

// A table of `rows` rows (plus the header) at most `cap` rows tall; it scrolls beyond.
ImVec2 table_size(int rows, int cap) {
  const float line = ImGui::GetTextLineHeightWithSpacing() + 2;
  return {0, (std::min(rows, cap) + 1.4f) * line + ImGui::GetStyle().ScrollbarSize};
}

void how_to_collect(const CounterPanel& p) {
  ImGui::TextDisabled(
      "Measure it again with counters (replay passes after timing; kwb prints how many first):");
  widgets::copy_button("counters_command", p.how_to_collect);
  ImGui::SameLine();
  ImGui::TextWrapped("%s", p.how_to_collect.c_str());
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped(
      "Sets: %s (kwb counters --list shows their metrics); --metrics NAME,... adds any metric of "
      "the GPU's chip.",
      all_counter_sets().c_str());
  ImGui::PopStyleColor();
}

void measured_section(const CounterPanel& p) {
  const MeasuredWork& m = *p.measured;
  if (m.dram_bytes > 0)
    widgets::label_value(
        "DRAM traffic",
        fmt::format("{} measured, {} in the work model: {:.2f}x",
                    format_bytes(static_cast<std::int64_t>(m.dram_bytes)),
                    format_bytes(static_cast<std::int64_t>(p.model_bytes)), m.traffic_ratio));
  if (m.flops)
    widgets::label_value("FLOPs",
                         fmt::format("{} executed, {} in the work model{}", format_count(*m.flops),
                                     format_count(p.model_flops),
                                     m.flop_ratio ? fmt::format(": {:.3g}x", *m.flop_ratio) : ""));
  if (m.intensity && p.model_bytes > 0)
    widgets::label_value("intensity",
                         fmt::format("{:.3g} FLOP/byte measured, {:.3g} in the work model",
                                     *m.intensity, p.model_flops / p.model_bytes));
  for (const std::string& flag : m.flags) {
    ImGui::PushStyleColor(ImGuiCol_Text, kFlagColour);
    ImGui::Bullet();
    ImGui::TextWrapped("%s", flag.c_str());
    ImGui::PopStyleColor();
  }
}

void kernels_table(const CounterPanel& p) {
  // No horizontal scrolling: the name column gives way (cut, whole on hover), the launch stays.
  const ImGuiTableFlags flags = (kTableFlags & ~ImGuiTableFlags_ScrollX);
  if (!ImGui::BeginTable("counter_kernels", 8, flags,
                         table_size(static_cast<int>(p.kernels.size()), 6)))
    return;
  for (const char* name : {"", "kernel", "grid", "block", "registers/thread", "shared/block",
                           "theoretical occupancy", "waves"})
    ImGui::TableSetupColumn(
        name, std::string_view(name) == "kernel" ? ImGuiTableColumnFlags_WidthStretch : 0);
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableHeadersRow();
  for (const KernelLaunchRow& k : p.kernels) {
    ImGui::TableNextRow();
    for (const std::string* cell :
         {&k.label, &k.name, &k.grid, &k.block, &k.registers, &k.shared, &k.occupancy, &k.waves}) {
      ImGui::TableNextColumn();
      // Kernel names are long template instantiations: shortened, clipped by the cell, whole on hover.
      if (cell == &k.name) {
        ImGui::TextUnformatted(cell->c_str());
        widgets::item_tooltip(k.full_name);
      } else {
        ImGui::TextUnformatted(cell->c_str());
      }
    }
  }
  ImGui::EndTable();
}

void figure_cell(const std::optional<CounterFigure>& f) {
  widgets::coloured_text(widgets::verdict_colour(f ? f->verdict : FigureVerdict::none),
                         figure_text(f));
  if (f) widgets::item_tooltip(f->verdict_text);
}

void ratio_cell(double ratio) {
  const bool off = std::isfinite(ratio) && std::fabs(ratio - 1) > kNcuAgreement;
  widgets::coloured_text(off ? kDisagreeColour : ImGui::GetColorU32(ImGuiCol_Text),
                         std::isfinite(ratio) ? fmt::format("{:.3f}", ratio) : "-");
  if (off) widgets::item_tooltip("more than 2% from Nsight Compute's value");
}

// Per-kernel columns make a table wider than the panel: it scrolls sideways. Without them the
// last column (what the row means) takes the width left and is clipped there.
ImGuiTableFlags wide_table_flags(int kernel_columns) {
  return kernel_columns > 0 ? kTableFlags : kTableFlags & ~ImGuiTableFlags_ScrollX;
}
ImGuiTableColumnFlags last_column_flags(int kernel_columns) {
  return kernel_columns > 0 ? 0 : ImGuiTableColumnFlags_WidthStretch;
}

void figures_table(const CounterPanel& p, int kernel_columns) {
  const int columns = 2 + kernel_columns + (p.has_ncu ? 2 : 0) + 2;
  if (!ImGui::BeginTable("counter_figures", columns, wide_table_flags(kernel_columns),
                         table_size(static_cast<int>(p.figures.size()), 12)))
    return;
  ImGui::TableSetupColumn("figure");
  ImGui::TableSetupColumn("total");
  for (int k = 0; k < kernel_columns; ++k) ImGui::TableSetupColumn(p.kernels[k].label.c_str());
  if (p.has_ncu) ImGui::TableSetupColumn("ncu"), ImGui::TableSetupColumn("kwb/ncu");
  ImGui::TableSetupColumn("verdict");
  ImGui::TableSetupColumn("what it means, the usual threshold", last_column_flags(kernel_columns));
  ImGui::TableSetupScrollFreeze(1, 1);
  ImGui::TableHeadersRow();
  for (const FigureRow& row : p.figures) {
    const std::string meaning = figure_meaning(*row.spec);
    // The verdict of the case's figure: kwb's own, else (an import alone) Nsight Compute's.
    const std::optional<CounterFigure>& judged = row.total ? row.total : row.ncu;
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(row.spec->label.c_str());
    widgets::item_tooltip(meaning);
    ImGui::TableNextColumn(), figure_cell(row.total);
    for (int k = 0; k < kernel_columns; ++k)
      ImGui::TableNextColumn(), figure_cell(row.per_kernel[k]);
    if (p.has_ncu) {
      ImGui::TableNextColumn(), figure_cell(row.ncu);
      ImGui::TableNextColumn(), ratio_cell(row.ratio);
    }
    ImGui::TableNextColumn();
    const FigureVerdict verdict = judged ? judged->verdict : FigureVerdict::none;
    widgets::coloured_text(widgets::verdict_colour(verdict),
                           verdict == FigureVerdict::attention ? judged->verdict_text
                           : verdict == FigureVerdict::fine    ? "fine"
                                                               : "-");
    ImGui::TableNextColumn(), ImGui::TextDisabled("%s", meaning.c_str());
    widgets::item_tooltip(meaning);
  }
  ImGui::EndTable();
}

void metrics_table(const CounterPanel& p, int kernel_columns) {
  const int columns = 2 + kernel_columns + (p.has_ncu ? 2 : 0) + 1;
  if (!ImGui::BeginTable("counter_metrics", columns, wide_table_flags(kernel_columns),
                         table_size(static_cast<int>(p.metrics.size()), 18)))
    return;
  ImGui::TableSetupColumn("metric");
  ImGui::TableSetupColumn("total");
  for (int k = 0; k < kernel_columns; ++k) ImGui::TableSetupColumn(p.kernels[k].label.c_str());
  if (p.has_ncu) ImGui::TableSetupColumn("ncu"), ImGui::TableSetupColumn("kwb/ncu");
  ImGui::TableSetupColumn("what it counts", last_column_flags(kernel_columns));
  ImGui::TableSetupScrollFreeze(1, 1);
  ImGui::TableHeadersRow();
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(p.metrics.size()));
  while (clipper.Step())
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const MetricRow& row = p.metrics[i];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.metric.c_str());
      widgets::item_tooltip(row.explanation);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format_metric_value(row.metric, row.total).c_str());
      for (int k = 0; k < kernel_columns; ++k) {
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(format_metric_value(row.metric, row.per_kernel[k]).c_str());
      }
      if (p.has_ncu) {
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(format_metric_value(row.metric, row.ncu).c_str());
        ImGui::TableNextColumn(), ratio_cell(row.ratio);
      }
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%s", row.explanation.empty() ? "-" : row.explanation.c_str());
    }
  ImGui::EndTable();
}

}  // namespace

void draw_counters_panel(const CaseRecord& c) {
  const CounterPanel p = build_counter_panel(c);  // dozens of metrics: rebuilt every frame
  switch (p.state) {
    case CounterPanel::State::none:
      ImGui::TextDisabled("No hardware counters in this record.");
      how_to_collect(p);
      break;
    case CounterPanel::State::unavailable:
      widgets::coloured_text(kFlagColour, "Counters were asked for but could not be read:");
      ImGui::TextWrapped("%s", p.unavailable.c_str());
      how_to_collect(p);
      break;
    case CounterPanel::State::collected: ImGui::TextWrapped("%s", p.source.c_str()); break;
  }
  if (c.ncu_counters) {
    if (p.has_ncu)
      ImGui::TextWrapped("%s %s (its totals, in the ncu columns)",
                         p.state == CounterPanel::State::collected ? "Beside them:" : "Imported:",
                         p.ncu_source.c_str());
    else if (!p.ncu_unavailable.empty())
      ImGui::TextWrapped("Nsight Compute's import has no values: %s", p.ncu_unavailable.c_str());
  }
  if (p.measured) {
    widgets::subheading("Measured work");
    measured_section(p);
  }
  if (!p.any()) return;
  const int kernel_columns = p.kernels.size() > 1
                                 ? std::min(static_cast<int>(p.kernels.size()), kMaxKernelColumns)
                                 : 0;  // one kernel: its column would repeat the total
  if (!p.kernels.empty()) {
    widgets::subheading("Kernels of the sample");
    kernels_table(p);
    if (static_cast<int>(p.kernels.size()) > kernel_columns && kernel_columns > 0)
      ImGui::TextDisabled("The tables below show the first %d of %d kernels beside the total.",
                          kernel_columns, static_cast<int>(p.kernels.size()));
  }
  if (!p.figures.empty()) {
    widgets::subheading(
        "Figures",
        "Named figures computed from the metrics, each against its usual threshold (green: within "
        "it, orange: worth a look): the figures, thresholds and verdicts of the review report's "
        "counters table. Hover a value for why it is worth a look.");
    figures_table(p, kernel_columns);
  }
  widgets::subheading("Metrics",
                      "Hover a metric for what it counts. Totals add counts (.sum) over "
                      "the sample's kernels; other forms are weighted by duration.");
  metrics_table(p, kernel_columns);
}

}  // namespace kwb::gui
