// Every window of the app, one per file (Tracy's habit): the frame loop (gui/app/app.cpp) is a
// list of these calls. Each draws from the model, changes it through its setters, and returns.
#pragma once

#include "gui/app/ui_state.hpp"
#include "gui/model/workbench.hpp"

namespace kwb::gui {

void draw_main_menu(Workbench& wb, UiState& ui);        // main_menu.cpp
void draw_open_dialog(Workbench& wb, UiState& ui);      // open_dialog.cpp
void draw_status_panel(Workbench& wb, UiState& ui);     // status_panel.cpp
void draw_results_table(Workbench& wb, UiState& ui);    // results_table.cpp
void draw_roofline_window(Workbench& wb, UiState& ui);  // roofline_window.cpp
void draw_sweep_window(Workbench& wb, UiState& ui);     // sweep_window.cpp
void draw_case_detail(Workbench& wb, UiState& ui);      // case_detail.cpp
void draw_compare_window(Workbench& wb, UiState& ui);   // compare_window.cpp
// Polls the live run every frame (records join the model even while the panel is hidden).
void draw_live_run_window(Workbench& wb, UiState& ui);  // live_run_window.cpp
void draw_help_window(UiState& ui);                      // help_window.cpp

// Parts of windows in files of their own: the case detail's Counters panel
// (counters_panel.cpp) and the compare view's counters side by side (counters_side_by_side.cpp).
void draw_counters_panel(const CaseRecord& c);
void draw_counters_side_by_side(Workbench& wb, UiState& ui);

// Every window opens reports with Workbench::open_in_background (menu, dialog, drop); once a
// frame this takes in the reports read and remembers them as recent files.
void finish_opening(Workbench& wb, UiState& ui);  // open_dialog.cpp

}  // namespace kwb::gui
