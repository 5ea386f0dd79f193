// The status panel: the loaded reports (device, date, cases) and every message, errors in red:
// a file that could not be opened says why here instead of stopping the app.
#include <imgui.h>

#include "gui/app/layout.hpp"
#include "gui/windows/windows.hpp"

namespace kwb::gui {

void draw_status_panel(Workbench& wb, UiState& ui) {
  place_status_window(ui);
  if (!ImGui::Begin("Status")) {
    ImGui::End();
    return;
  }
  // Reports being read on the worker thread: the UI keeps drawing meanwhile.
  for (const auto& path : wb.loading()) ImGui::TextDisabled("loading %s ...", path.c_str());
  if (wb.reports().empty() && wb.loading().empty())
    ImGui::TextDisabled(
        "No report open: File > Open, drop a report.json here, or name it on the command line.");
  for (const LoadedReport& r : wb.reports()) {
    const RunInfo& run = r.report.run;
    ImGui::Text("%s", r.name.c_str());
    ImGui::SameLine();
    ImGui::TextDisabled("%s, %s, %d cases, kwb %s (%s)%s",
                        run.device ? run.device->name.c_str() : "no device", run.started_at.c_str(),
                        static_cast<int>(r.report.cases.size()), run.tool_version.c_str(),
                        run.git_sha.c_str(), run.complete ? "" : ", INCOMPLETE run");
  }
  if (!wb.messages().empty()) {
    ImGui::Separator();
    if (ImGui::SmallButton("clear messages")) wb.clear_messages();
  }
  // Newest first: the message a person is waiting for is on top.
  const auto& messages = wb.messages();
  for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
    const ImVec4 colour = it->level == Message::Level::error ? ImVec4(0.8f, 0.1f, 0.1f, 1)
                          : it->level == Message::Level::warning
                              ? ImVec4(0.7f, 0.45f, 0.0f, 1)
                              : ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled);
    ImGui::PushStyleColor(ImGuiCol_Text, colour);
    ImGui::TextWrapped("%s%s", it->level == Message::Level::error ? "Cannot open: " : "",
                       it->text.c_str());
    ImGui::PopStyleColor();
  }
  ImGui::End();
}

}  // namespace kwb::gui
