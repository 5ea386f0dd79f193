// The app's window and frame loop (GLFW + OpenGL 3 + Dear ImGui), for the interactive app and
// for headless runs under Xvfb (--screenshot, --frames).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gui/app/ui_state.hpp"

namespace kwb::gui {

struct AppOptions {
  std::vector<std::string> reports;  // opened before the first frame
  int width = 1600, height = 1000;
  std::optional<View> view;          // show only this view (screenshots)
  std::filesystem::path screenshot;  // write the last frame here, then exit
  int frames = 0;                    // > 0: exit after this many frames
  bool print_fps = false;            // print the frame rate at exit (over frames after the first)
  float text_scale = 0;              // > 0: this text size (1 = 13 px); 0: the saved one, else the screen's
  bool live = false;                 // --view live: the live run window alone
};

// Returns the process's exit code: 0, or 1 when the window or the screenshot failed.
int run_app(const AppOptions& options);

}  // namespace kwb::gui
