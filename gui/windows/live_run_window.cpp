// Run > Live run: a sweep picked here (ops, variants, dtypes and axes as `kwb run` takes them, or
// a suite file) runs on the session's thread while this panel shows its progress bar, ETA and
// the case in flight; the results join the table and charts as they finish (LiveRun::poll) and
// the report is saved in the --out folder named here. Without a GPU the inputs are disabled and
// the panel says why: a run would only fail at the worker's hello.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cstdio>

#include "gui/app/layout.hpp"
#include "gui/windows/windows.hpp"

namespace kwb::gui {

namespace {

constexpr const char* kPresets[] = {"quick", "default", "precise", "verify"};

void draw_inputs(LiveRunRequest& r, bool enabled) {
  ImGui::BeginDisabled(!enabled);
  // Labelled as the model's messages name them (field_label).
  ImGui::InputTextWithHint(field_label(Setting::op).c_str(), "all (e.g. rmsnorm_fwd,softmax_fwd)", &r.ops);
  ImGui::InputTextWithHint(field_label(Setting::variant).c_str(), "all but test-only ones", &r.variants);
  ImGui::InputTextWithHint(field_label(Setting::dtype).c_str(), "each op's (fp32, fp16, bf16)", &r.dtypes);
  ImGui::InputTextWithHint(field_label(Setting::axis).c_str(), "default shapes (e.g. rows=1024 cols=1024:16384:x2)",
                           &r.axes);
  ImGui::InputTextWithHint(field_label(Setting::suite).c_str(), "none (a suite gives its own shapes)", &r.suite);
  if (ImGui::BeginCombo(field_label(Setting::preset).c_str(), r.preset.c_str())) {
    for (const char* p : kPresets)
      if (ImGui::Selectable(p, r.preset == p)) r.preset = p;
    ImGui::EndCombo();
  }
  ImGui::InputTextWithHint("out folder", "results/live-<time>", &r.out);
  ImGui::InputInt("device", &r.device);
  r.device = std::max(0, r.device);
  ImGui::Checkbox((field_label(Setting::datasheet_ceilings) + " (measure none: a quicker start)").c_str(),
                  &r.datasheet_ceilings);
  ImGui::EndDisabled();
}

void draw_progress(const LiveRun& live) {
  const SessionProgress p = live.progress();
  const float fraction = p.total ? static_cast<float>(p.done) / static_cast<float>(p.total) : 0.0f;
  char overlay[64];
  std::snprintf(overlay, sizeof overlay, "%zu / %zu", p.done, p.total);
  ImGui::ProgressBar(fraction, {-1, 0}, overlay);
  ImGui::TextWrapped("%s", live.status().c_str());
}

}  // namespace

void draw_live_run_window(Workbench& wb, UiState& ui) {
  LiveRun& live = ui.live;
  live.poll(wb);  // every frame, shown or not: the results join the model as they finish
  if (!ui.show_live) return;
  place_centered(560, 420);
  if (!ImGui::Begin("Live run", &ui.show_live)) {
    ImGui::End();
    return;
  }
  const GpuPresence& gpu = gpu_presence();
  if (!gpu.present) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.7f, 0.45f, 0.0f, 1));
    ImGui::TextWrapped("Live runs are disabled: %s. Run `kwb run` on a GPU machine and open its report.json.",
                       gpu.reason.c_str());
    ImGui::PopStyleColor();
  }
  draw_inputs(ui.live_request, gpu.present && !live.running());

  ImGui::BeginDisabled(!gpu.present || live.running());
  if (ImGui::Button("Run")) live.start(ui.live_request, wb);
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(!live.running());
  if (ImGui::Button("Cancel")) live.cancel(CancelMode::finish_current);
  ImGui::SameLine();
  if (ImGui::Button("Abandon current case")) live.cancel(CancelMode::abandon_current);
  ImGui::EndDisabled();

  ImGui::Separator();
  if (live.running() || live.finished()) draw_progress(live);
  if (!live.error().empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.8f, 0.1f, 0.1f, 1));
    ImGui::TextWrapped("%s", live.error().c_str());
    ImGui::PopStyleColor();
  }
  ImGui::End();
}

}  // namespace kwb::gui
