// Initial window placement (see layout.hpp).
#include "gui/app/layout.hpp"

#include <imgui.h>

namespace kwb::gui {

namespace {

constexpr float kStatusShare = 0.12f;  // of the height below the menu bar
constexpr float kTableShare = 0.64f;   // of the width, for the results table and the case detail

struct Rect {
  float x0, y0, x1, y1;  // fractions of the area below the menu bar
};

void place(Rect r, ImGuiCond cond) {
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const float top = ImGui::GetFrameHeight();  // the main menu bar
  const float h = display.y - top;
  ImGui::SetNextWindowPos({r.x0 * display.x, top + r.y0 * h}, cond);
  ImGui::SetNextWindowSize({(r.x1 - r.x0) * display.x, (r.y1 - r.y0) * h}, cond);
}

}  // namespace

void place_view_window(const UiState& ui, View v) {
  const float bottom = 1 - kStatusShare;
  if (ui.solo) {
    place({0, 0, 1, bottom}, ImGuiCond_Always);
    return;
  }
  const float split = 0.6f * bottom;
  switch (v) {
    // The table gets the larger share: its default columns (through speedup and badges) fit
    // 0.64 of 1280 px.
    case View::table: place({0, 0, kTableShare, split}, ImGuiCond_FirstUseEver); break;
    case View::compare: place({0.05f, 0.05f, 0.6f, split + 0.05f}, ImGuiCond_FirstUseEver); break;
    case View::roofline: place({kTableShare, 0, 1, split}, ImGuiCond_FirstUseEver); break;
    case View::detail: place({0, split, kTableShare, bottom}, ImGuiCond_FirstUseEver); break;
    case View::sweep: place({kTableShare, split, 1, bottom}, ImGuiCond_FirstUseEver); break;
  }
}

void place_status_window(const UiState& ui) {
  place({0, 1 - kStatusShare, 1, 1}, ui.solo ? ImGuiCond_Always : ImGuiCond_FirstUseEver);
}

void place_centered(float width, float height) {
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  ImGui::SetNextWindowPos({display.x / 2, display.y / 2}, ImGuiCond_Appearing, {0.5f, 0.5f});
  ImGui::SetNextWindowSize({width, height}, ImGuiCond_Appearing);
}

}  // namespace kwb::gui
