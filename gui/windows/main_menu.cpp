// The main menu bar: File (open, recent, close, quit), View (which windows), Help.
#include <fmt/format.h>
#include <imgui.h>

#include <cmath>

#include "gui/windows/windows.hpp"

namespace kwb::gui {

void draw_main_menu(Workbench& wb, UiState& ui) {
  if (!ImGui::BeginMainMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open report...", "Ctrl+O")) ui.show_open_dialog = true;
    if (ImGui::BeginMenu("Open recent", !ui.recent.empty())) {
      for (const std::string& path : ui.recent)
        if (ImGui::MenuItem(path.c_str())) wb.open_in_background(path);
      ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("Close", !wb.reports().empty())) {
      for (int i = 0; i < static_cast<int>(wb.reports().size()); ++i) {
        ImGui::PushID(i);
        if (ImGui::MenuItem(wb.reports()[i].name.c_str())) wb.close(i);
        ImGui::PopID();
      }
      ImGui::EndMenu();
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) ui.quit = true;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    for (View v : kAllViews) ImGui::MenuItem(view_name(v), nullptr, ui.show_flag(v));
    ImGui::Separator();
    if (ImGui::BeginMenu("Text size")) {
      for (float s : {0.75f, 1.0f, 1.25f, 1.5f, 1.75f, 2.0f, 2.5f})
        if (ImGui::MenuItem(fmt::format("{:.0f}%", 100 * s).c_str(), nullptr, std::abs(ui.text_scale - s) < 0.01f))
          ui.text_scale = s, ui.text_scale_chosen = true;
      ImGui::EndMenu();
    }
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Run")) {
    ImGui::MenuItem("Live run...", nullptr, &ui.show_live);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    ImGui::MenuItem("Keyboard and docs", nullptr, &ui.show_help);
    ImGui::MenuItem("ImGui demo window (widgets)", nullptr, &ui.show_demo);
    ImGui::EndMenu();
  }
  ImGui::TextDisabled("  %d report(s), %d cases", static_cast<int>(wb.reports().size()),
                      static_cast<int>(wb.rows().size()));
  if (wb.cases_with_counters() > 0)
    ImGui::SameLine(0, 0), ImGui::TextDisabled(", %d with counters", wb.cases_with_counters());
  ImGui::EndMainMenuBar();

  const ImGuiIO& io = ImGui::GetIO();
  // ImGui 1.86 indexes keys by the backend's codes; GLFW's letter keys are their ASCII capitals.
  if (io.KeyCtrl && ImGui::IsKeyPressed('O')) ui.show_open_dialog = true;
  if (io.KeyCtrl && ImGui::IsKeyPressed('Q')) ui.quit = true;
}

}  // namespace kwb::gui
