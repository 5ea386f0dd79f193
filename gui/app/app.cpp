// The frame loop. Opening the reports is quick (the JSON is small next to a frame), so it runs
// on the UI thread; everything else is drawing the model. The loop in numbered steps:
//   1. GLFW window + OpenGL 3.3 core context (Mesa's software renderer under Xvfb gives one)
//   2. Dear ImGui context and the GLFW / OpenGL 3 backends
//   3. per frame: events (files dropped on the window), new frame, the windows, render
//   4. headless: after the last frame, the back buffer to PNG, and exit
#include "gui/app/app.hpp"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "gui/app/screenshot.hpp"
#include "gui/model/recent_files.hpp"
#include "gui/windows/windows.hpp"

namespace kwb::gui {

namespace {

void on_glfw_error(int code, const char* text) {
  std::fprintf(stderr, "kwb-gui: GLFW error %d: %s\n", code, text);
}

// Files dropped on the window are queued and opened by the next frame (GLFW calls this from
// glfwPollEvents, outside any ImGui frame).
void on_drop(GLFWwindow* window, int count, const char** paths) {
  auto* ui = static_cast<UiState*>(glfwGetWindowUserPointer(window));
  for (int i = 0; i < count; ++i) ui->dropped.emplace_back(paths[i]);
}

void draw_frame(Workbench& wb, UiState& ui) {
  for (const std::string& path : ui.dropped) wb.open_in_background(path);
  ui.dropped.clear();
  finish_opening(wb, ui);
  // The frame: one line per window.
  draw_main_menu(wb, ui);
  draw_results_table(wb, ui);
  draw_roofline_window(wb, ui);
  draw_sweep_window(wb, ui);
  draw_case_detail(wb, ui);
  draw_compare_window(wb, ui);
  draw_live_run_window(wb, ui);
  draw_status_panel(wb, ui);
  draw_open_dialog(wb, ui);
  draw_help_window(ui);
  if (ui.show_demo) ImGui::ShowDemoWindow(&ui.show_demo);
}

// The font at 13 px times the scale (ImGui's own font, rasterised at that size, so it stays sharp)
// and every spacing scaled alike; called between frames when View > Text size changes it.
void apply_text_scale(UiState& ui) {
  const float scale = std::clamp(ui.text_scale, 0.5f, 4.0f);
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  ImFontConfig font;  // as AddFontDefault sets it for its pixel font when given no config
  font.OversampleH = font.OversampleV = 1;
  font.PixelSnapH = true;
  font.SizePixels = std::round(13.0f * scale);
  io.Fonts->AddFontDefault(&font);
  // Before the first frame the backend has no device objects yet: its first NewFrame builds the
  // texture from this atlas. After, the texture is rebuilt here.
  if (ui.applied_text_scale > 0) {
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
  }
  ImGuiStyle style;
  ImGui::StyleColorsLight(&style);
  style.ScaleAllSizes(scale);
  ImGui::GetStyle() = style;
  ui.applied_text_scale = ui.text_scale;
  // Saved only when chosen in the menu: neither --scale nor the screen's scale of a first start
  // becomes the user's choice.
  if (ui.text_scale_chosen && !ui.scale_file.empty()) write_text_scale(ui.scale_file, ui.text_scale);
  ui.text_scale_chosen = false;
}

}  // namespace

int run_app(const AppOptions& options) {
  const bool headless = options.frames > 0;
  // 1. Window and context.
  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit()) {
    std::fprintf(
        stderr,
        "kwb-gui: cannot initialise GLFW (no display? run under xvfb-run for screenshots)\n");
    return 1;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  GLFWwindow* window =
      glfwCreateWindow(options.width, options.height, "Kernel Workbench", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "kwb-gui: cannot create a %dx%d OpenGL 3.3 window\n", options.width,
                 options.height);
    glfwTerminate();
    return 1;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(headless ? 0 : 1);  // headless runs measure the frame rate: no vsync

  // 2. ImGui. Headless runs keep no layout file, so every screenshot starts from the same layout.
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  const std::filesystem::path recent = recent_files_path();
  const std::string ini = recent.empty() ? "" : (recent.parent_path() / "imgui.ini").string();
  io.IniFilename = headless || ini.empty() ? nullptr : ini.c_str();
  ImGui::StyleColorsLight();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");

  Workbench wb;
  UiState ui;
  ui.solo = options.view;
  if (options.view) *ui.show_flag(*options.view) = true;
  if (options.live) {  // --view live: the live run window alone
    ui.show_live = true;
    ui.show_table = ui.show_roofline = ui.show_sweep = ui.show_detail = ui.show_compare = false;
  }
  if (!headless) {  // a test run neither reads nor writes the user's recent files
    ui.recent_list = recent;
    ui.recent = read_recent_files(recent);
    if (!recent.empty()) ui.scale_file = recent.parent_path() / "text-scale";
  }
  // The text size: the flag's, else the saved one, else the screen's content scale (2 on a
  // high-DPI screen), else 1.
  float content_x = 1, content_y = 1;
  glfwGetWindowContentScale(window, &content_x, &content_y);
  const std::optional<float> saved = ui.scale_file.empty() ? std::nullopt : read_text_scale(ui.scale_file);
  ui.text_scale = options.text_scale > 0 ? options.text_scale
                  : saved              ? *saved
                  : headless           ? 1.0f
                                       : std::clamp(content_x, 1.0f, 3.0f);
  for (const std::string& path : options.reports) wb.open_in_background(path);
  if (headless) wb.wait_for_loads();  // a screenshot shows the reports, never "loading"
  glfwSetWindowUserPointer(window, &ui);
  glfwSetDropCallback(window, on_drop);

  // 3. Frames.
  int exit_code = 0;
  using Clock = std::chrono::steady_clock;
  Clock::time_point second_frame;
  for (int frame = 0; !glfwWindowShouldClose(window) && !ui.quit; ++frame) {
    if (frame == 1) second_frame = Clock::now();
    if (headless)
      glfwPollEvents();
    else
      glfwWaitEventsTimeout(0.25);  // idle when nothing happens; tooltips still fade
    if (ui.text_scale != ui.applied_text_scale) apply_text_scale(ui);
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    draw_frame(wb, ui);
    ImGui::Render();
    int fb_w = 0, fb_h = 0;
    glfwGetFramebufferSize(window, &fb_w, &fb_h);
    glViewport(0, 0, fb_w, fb_h);
    glClearColor(0.86f, 0.87f, 0.89f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    std::string error;
    if (ui.export_png) {
      const PngExport& e = *ui.export_png;
      if (!write_framebuffer_png(e.path, static_cast<int>(e.x), static_cast<int>(e.y),
                                 static_cast<int>(e.w), static_cast<int>(e.h), fb_h, error))
        wb.add_message(Message::Level::error, error);
      ui.export_png.reset();
    }
    // 4. Headless: the last frame to PNG, then stop.
    const bool last = headless && frame + 1 >= options.frames;
    if (last && !options.screenshot.empty()) {
      if (write_framebuffer_png(options.screenshot, 0, 0, fb_w, fb_h, fb_h, error))
        std::printf("kwb-gui: wrote %s (%dx%d)\n", options.screenshot.c_str(), fb_w, fb_h);
      else
        std::fprintf(stderr, "kwb-gui: %s\n", error.c_str()), exit_code = 1;
    }
    glfwSwapBuffers(window);
    if (last) {
      if (options.print_fps && frame >= 1) {
        const double seconds = std::chrono::duration<double>(Clock::now() - second_frame).count();
        std::printf(
            "kwb-gui: %d frames after the first in %.2f s: %.1f frames per second (%zu cases)\n",
            frame, seconds, frame / seconds, wb.rows().size());
      }
      break;
    }
  }
  // Whatever the status panel said, a headless run also prints, so a test can read it.
  if (headless)
    for (const Message& m : wb.messages())
      if (m.level != Message::Level::info) std::fprintf(stderr, "kwb-gui: %s\n", m.text.c_str());

  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return exit_code;
}

}  // namespace kwb::gui
