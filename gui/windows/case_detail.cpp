// The case detail: everything about the selected case. Its sample histogram with the median
// and p10/p90 marked, the per-kernel breakdown, its hardware counters (the Counters panel,
// counters_panel.cpp), the verification's error statistics, the environment it was measured
// in, and the repro command with a copy button. A wide window puts the counters in a column of
// their own beside the rest.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "reports/review/kernel_label.hpp"
#include "gui/app/layout.hpp"
#include "gui/model/sample_histogram.hpp"
#include "gui/model/units.hpp"
#include "gui/widgets/widgets.hpp"
#include "gui/windows/windows.hpp"
#include "harness/catalogue/math_label.hpp"

namespace kwb::gui {

namespace {

// Without per-sample times (a report written with them trimmed) the summary still has a shape:
// min to max as a whisker, p10 to p90 as a box, the median as a line.
void summary_box(const SummaryStats& s, plot::View& view) {
  ImGui::TextDisabled(
      "No per-sample times in the report: min, p10, median, p90 and max from its summary.");
  view.x = plot::Scale::fit(s.min, std::max(s.max, s.min * 1.0001 + 1e-9), false, 0.05);
  view.y = {0, 1, false};
  plot::Plot p("##summary", view, {0, 110}, "sample time (us)", "");
  p.line(s.min, 0.5, s.max, 0.5, IM_COL32(90, 90, 90, 255), 1.5f);
  for (double v : {s.min, s.max}) p.line(v, 0.35, v, 0.65, IM_COL32(90, 90, 90, 255), 1.5f);
  const ImVec2 a = p.to_screen(s.p10, 0.8), z = p.to_screen(s.p90, 0.2);
  p.draw_list()->AddRectFilled(a, {std::max(z.x, a.x + 2), z.y}, plot::palette(0, 0.6f));
  p.line(s.median, 0.15, s.median, 0.85, IM_COL32(200, 40, 40, 255), 2.5f);
  p.text(s.median, 0.85, "median", IM_COL32(200, 40, 40, 255), {3, -14});
  p.text(s.p10, 0.2, "p10", IM_COL32(90, 90, 90, 255), {-24, 0});
  p.text(s.p90, 0.2, "p90", IM_COL32(90, 90, 90, 255), {3, 0});
  p.end();
}

void histogram(const TimingResult& t, plot::View& view) {
  const auto& samples = t.samples_us;
  if (samples.empty()) {
    summary_box(t.span, view);
    return;
  }
  const SampleHistogram h = sample_histogram(samples);
  view.x = plot::Scale::fit(h.lo, h.hi, false, 0.03);
  view.y = {0, h.peak * 1.15, false};
  plot::Plot p("##histogram", view, {0, 190}, "sample time (us)", "samples");
  for (int b = 0; b < static_cast<int>(h.counts.size()); ++b) {
    if (!h.counts[b]) continue;
    const ImVec2 a = p.to_screen(h.lo + b * h.bin_width(), h.counts[b]),
                 z = p.to_screen(h.lo + (b + 1) * h.bin_width(), 0);
    p.draw_list()->AddRectFilled({a.x + 1, a.y}, {z.x, z.y}, plot::palette(0, 0.8f));
  }
  const int peak = h.peak;
  const struct {
    double v;
    const char* name;
    ImU32 colour;
  } marks[] = {{t.span.p10, "p10", IM_COL32(120, 120, 120, 255)},
               {t.span.median, "median", IM_COL32(200, 40, 40, 255)},
               {t.span.p90, "p90", IM_COL32(120, 120, 120, 255)}};
  for (const auto& m : marks) {
    p.line(m.v, 0, m.v, peak * 1.15, m.colour, 2.0f, m.name[0] == 'p');
    p.text(m.v, peak * 1.1, m.name, m.colour, {3, 0});
  }
  p.end();
}

void timing_section(const CaseRecord& c, plot::View& view) {
  const TimingResult& t = *c.timing;
  widgets::label_value("median", format_time_us(t.span.median));
  ImGui::SameLine(), widgets::label_value("p10", format_time_us(t.span.p10));
  ImGui::SameLine(), widgets::label_value("p90", format_time_us(t.span.p90));
  ImGui::SameLine(), widgets::label_value("samples", std::to_string(t.span.count));
  ImGui::SameLine(), widgets::label_value("noise (IQR/median)", format_percent(100 * t.span.noise));
  widgets::label_value(
      "timer", fmt::format("{} {}, flush {}, launch {}, preset {}, stop: {}", t.timer, to_string(t.mode),
                           t.flush, to_string(t.launch), t.preset, to_string(t.stop_reason)));
  if (t.launch_overhead_us)
    widgets::label_value("host launch", format_time_us(*t.launch_overhead_us) + " per kernel");
  if (c.derived) {
    const Derived& d = *c.derived;
    widgets::label_value("rates",
                         fmt::format("{}  {}  {} of roof ({}-bound)  {} of the DRAM roof",
                                     format_gbps(d.bandwidth_gbps), format_tflops(d.tflops),
                                     format_percent(d.pct_of_roofline), d.bound,
                                     format_percent(d.pct_of_bandwidth_ceiling)));
    if (d.speedup_vs_baseline) {
      const std::string maths = math_comparison(c.math, d.baseline_math);
      widgets::label_value(
          "speedup", fmt::format("{} vs {}{}", format_ratio(*d.speedup_vs_baseline),
                                 d.baseline_variant, maths.empty() ? "" : " (" + maths + ")"));
    }
  }
  if (t.clocks)
    widgets::label_value(
        "SM clock",
        fmt::format("{:.0f}-{:.0f} MHz (rated {:.0f}), {} of {} samples throttled",
                    t.clocks->sm_min_mhz, t.clocks->sm_max_mhz, t.clocks->sm_rated_max_mhz,
                    t.clocks->throttled_samples, t.clocks->samples));
  histogram(t, view);
  if (!t.kernels.empty() && ImGui::BeginTable("kernels", 3,
                                              ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter |
                                                  ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("kernel", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("launches/sample");
    ImGui::TableSetupColumn("median");
    ImGui::TableHeadersRow();
    for (const auto& k : t.kernels) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn(), ImGui::TextUnformatted(review::readable_kernel_name(k.name).c_str());
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", k.name.c_str());  // the whole name
      ImGui::TableNextColumn(), ImGui::Text("%lld", static_cast<long long>(k.launches_per_sample));
      ImGui::TableNextColumn(), ImGui::TextUnformatted(format_time_us(k.median_us).c_str());
    }
    ImGui::EndTable();
  }
}

void verify_section(const VerifyResult& v) {
  widgets::label_value("verification",
                       fmt::format("{}: {}", v.passed ? "passed" : "FAILED", v.sampling));
  widgets::label_value(
      "errors",
      fmt::format("max abs {:.3g}, max rel {:.3g}, rel L2 {:.3g}; {} mismatches, {} non-finite, "
                  "{} unwritten of {} checked",
                  v.max_abs_err, v.max_rel_err, v.rel_l2_err, v.mismatches, v.nonfinite_mismatches,
                  v.unwritten, v.elements_checked));
  for (const auto& m : v.first_mismatches)
    ImGui::BulletText("%s[%lld]: got %.6g, expected %.6g", m.tensor.c_str(),
                      static_cast<long long>(m.index), m.got, m.expected);
}

void environment_section(const RunInfo& run) {
  if (run.device) {
    const DeviceInfo& d = *run.device;
    widgets::label_value(
        "device", fmt::format("{} (sm_{}{}, {} SMs, {}), driver {}", d.name, d.cc_major, d.cc_minor,
                              d.sm_count, format_bytes(d.global_mem_bytes), d.driver_release));
  }
  widgets::label_value("run", fmt::format("{} on {}, kwb {} ({})", run.started_at, run.host,
                                          run.tool_version, run.git_sha));
  for (const auto* c : {run.ceilings ? &*run.ceilings : nullptr,
                        run.datasheet_ceilings ? &*run.datasheet_ceilings : nullptr}) {
    if (!c) continue;
    // Only the figures the set holds: a datasheet has no L2 copy, an older cache no read-only.
    std::string text;
    auto add = [&](const char* name, double v, std::string (*fmt_fn)(double)) {
      if (v > 0) text += (text.empty() ? "" : ", ") + std::string(name) + " " + fmt_fn(v);
    };
    add("DRAM copy", c->dram_copy_gbps, format_gbps);
    add("DRAM read", c->dram_read_gbps, format_gbps);
    add("DRAM write", c->dram_write_gbps, format_gbps);
    add("L2 copy", c->l2_copy_gbps, format_gbps);
    add("fp32", c->fp32_tflops, format_tflops);
    for (const auto& [dtype, tflops] : c->tensor_tflops) add(dtype.c_str(), tflops, format_tflops);
    if (!c->measured_at.empty()) text += ", measured " + c->measured_at;
    widgets::label_value(c->source == "measured" ? "ceilings (measured)" : "ceilings (datasheet)",
                         text);
  }
  for (const auto& [name, value] : run.settings)
    ImGui::TextDisabled("%s = %s", name.c_str(), value.c_str());
}

constexpr float kTwoColumnWidth = 1200;

void counters_section(const CaseRecord& c) {
  // The header's title says what is inside before it is opened; its id stays the same.
  const char* what = c.counters && !c.counters->unavailable.empty() ? "unavailable"
                     : c.counters || c.ncu_counters                 ? "collected"
                                                                    : "none";
  const std::string title = fmt::format("Counters ({})###counters", what);
  if (ImGui::CollapsingHeader(title.c_str(), ImGuiTreeNodeFlags_DefaultOpen))
    draw_counters_panel(c);
}

}  // namespace

void draw_case_detail(Workbench& wb, UiState& ui) {
  if (!ui.shown(View::detail)) return;
  place_view_window(ui, View::detail);
  if (!ImGui::Begin("Case detail", ui.show_flag(View::detail))) {
    ImGui::End();
    return;
  }
  // A screenshot of this view with nothing selected shows the first case.
  if (!wb.focus().valid() && ui.solo && !wb.rows().empty())
    wb.select(wb.rows()[wb.visible_rows().empty() ? 0 : wb.visible_rows()[0]].ref);
  const CaseRecord* c = wb.find(wb.focus());
  if (!c) {
    ImGui::TextDisabled("Select a case in the table or on a chart.");
    ImGui::End();
    return;
  }
  const TableRow& row = wb.rows()[wb.row_of(wb.focus())];
  ImGui::TextUnformatted(row.key.c_str());
  if (row.badges.any()) ImGui::SameLine(), widgets::badges(row.badges);
  widgets::label_value("disposition",
                       c->reason.empty() ? row.disposition : row.disposition + ": " + c->reason);
  // What ran it, before any figure: a tf32 GEMM and a full-fp32 one are not the same contest.
  widgets::label_value(
      "ran", fmt::format("{} math, {}", row.math.empty() ? "unrecorded" : row.math,
                         row.uses.empty() ? "the project's own kernels" : "calls " + row.uses));
  ImGui::TextDisabled("repro:");
  ImGui::SameLine();
  widgets::copy_button("repro", c->repro);
  ImGui::SameLine();
  ImGui::TextWrapped("%s", c->repro.c_str());
  // Wide enough for two columns of tables: the counters beside the rest, each scrolling.
  const bool two_columns = ImGui::GetContentRegionAvail().x >= kTwoColumnWidth;
  if (two_columns) ImGui::BeginChild("##case", {ImGui::GetContentRegionAvail().x * 0.45f, 0});
  plot::View histogram_view;  // refitted every frame to the samples: nothing to keep
  if (ImGui::CollapsingHeader("Timing", ImGuiTreeNodeFlags_DefaultOpen)) {
    if (c->timing)
      timing_section(*c, histogram_view);
    else
      ImGui::TextDisabled("Not timed.");
  }
  if (!two_columns) counters_section(*c);
  if (ImGui::CollapsingHeader("Verification", ImGuiTreeNodeFlags_DefaultOpen)) {
    if (c->verify)
      verify_section(*c->verify);
    else
      ImGui::TextDisabled("Not verified.");
  }
  if (ImGui::CollapsingHeader("Environment", ImGuiTreeNodeFlags_DefaultOpen))
    environment_section(wb.reports()[wb.focus().report].report.run);
  if (two_columns) {
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginChild("##counters", {0, 0});
    counters_section(*c);
    ImGui::EndChild();
  }
  ImGui::End();
}

}  // namespace kwb::gui
