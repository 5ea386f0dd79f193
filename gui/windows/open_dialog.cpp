// File > Open: a path to type (or paste), the recent files one click away. A native file dialog
// would need a toolkit the machines do not have; files can also be dropped on the window.
#include <imgui.h>
#include <imgui_stdlib.h>

#include "gui/app/layout.hpp"
#include "gui/model/recent_files.hpp"
#include "gui/widgets/widgets.hpp"
#include "gui/windows/windows.hpp"

namespace kwb::gui {

void finish_opening(Workbench& wb, UiState& ui) {
  for (const auto& path : wb.finish_loads()) {
    if (ui.recent_list.empty()) continue;
    remember_recent_file(ui.recent_list, path);
    ui.recent = read_recent_files(ui.recent_list);
  }
}

void draw_open_dialog(Workbench& wb, UiState& ui) {
  if (!ui.show_open_dialog) return;
  place_centered(720, 360);
  if (!ImGui::Begin("Open report", &ui.show_open_dialog)) {
    ImGui::End();
    return;
  }
  ImGui::TextUnformatted("Path of a report.json (written by kwb run or kwb merge):");
  if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
  ImGui::SetNextItemWidth(-80);
  const bool enter =
      ImGui::InputText("##path", &ui.open_path, ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if ((ImGui::Button("Open") || enter) && !ui.open_path.empty()) {
    wb.open_in_background(ui.open_path);
    ui.show_open_dialog = false;
  }
  widgets::help_marker(
      "Files can also be dropped on the window, or given on the command line:\n"
      "kwb-gui a/report.json b/report.json");
  ImGui::Separator();
  ImGui::TextDisabled("Recent files");
  if (ui.recent.empty()) ImGui::TextDisabled("(none yet)");
  for (const std::string& path : ui.recent)
    if (ImGui::Selectable(path.c_str())) {
      wb.open_in_background(path);
      ui.show_open_dialog = false;
    }
  ImGui::End();
}

}  // namespace kwb::gui
