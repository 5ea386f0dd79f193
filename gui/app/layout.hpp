// Where each window starts: a fixed grid the first time (the user's moves are then kept by
// ImGui), or, for a headless screenshot, the chosen view filling the window.
#pragma once

#include "gui/app/ui_state.hpp"

namespace kwb::gui {

// Call right before ImGui::Begin of a view's window.
void place_view_window(const UiState& ui, View v);
void place_status_window(const UiState& ui);
void place_centered(float width, float height);  // dialogs

}  // namespace kwb::gui
