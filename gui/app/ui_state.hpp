// What the windows share besides the model: which windows are shown, the chart views' zoom,
// the open dialog's text, the recent files, requests for the frame loop (export a PNG, quit).
// ImGui-free data; the frame loop owns one.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gui/model/case_table.hpp"
#include "gui/model/live_run.hpp"
#include "gui/plot/plot.hpp"

namespace kwb::gui {

enum class View { table, roofline, sweep, detail, compare };
inline constexpr View kAllViews[] = {View::table, View::roofline, View::sweep, View::detail,
                                     View::compare};
const char* view_name(View v);  // "table", "roofline", ...; also the --view flag's words
std::optional<View> parse_view(const std::string& name);

// A rectangle of the framebuffer to write as a PNG after this frame is drawn.
struct PngExport {
  std::filesystem::path path;
  float x = 0, y = 0, w = 0, h = 0;  // in window pixels, top-left origin
};

struct UiState {
  // Shown windows (View menu). The status panel is always there.
  bool show_table = true, show_roofline = true, show_sweep = true, show_detail = true,
       show_compare = false;
  bool show_open_dialog = false, show_demo = false, show_help = false;
  // View > Text size: the font's size and every spacing, times this (the first start takes the
  // screen's content scale; the choice is saved beside the recent files).
  float text_scale = 1.0f;
  float applied_text_scale = 0;  // what the font atlas was built for; differs: rebuilt next frame
  bool text_scale_chosen = false;  // set by View > Text size: only a choice made there is saved
  std::filesystem::path scale_file;  // empty: the choice is not saved (headless runs)
  // Headless screenshots: only this view, filling the window above the status panel.
  std::optional<View> solo;

  // File > Open and recent files.
  std::string open_path;
  std::filesystem::path recent_list;  // empty: recent files are not read nor written
  std::vector<std::string> recent;
  std::vector<std::string> dropped;  // paths dropped on the window, opened next frame

  // Charts and views.
  plot::View roofline_view, sweep_view;
  bool colour_by_variant = false;
  // The roofline's "measured" toggle: cases with counters also at their measured point.
  bool roofline_measured = true;
  CaseRef counter_partner;  // the compare view's counters side by side: the case beside the focus
  int sweep_report = 0, sweep_chart = 0;
  int sweep_metric = -1;  // a SweepMetric; -1: the review report's choice for the op
  int compare_base = 0, compare_next = 1;
  bool scroll_table_to_focus = false;

  // Run > Live run: the panel's inputs and the run itself (its session runs on a thread of its
  // own; the panel polls it once a frame).
  bool show_live = false;
  LiveRunRequest live_request;
  LiveRun live;

  std::optional<PngExport> export_png;
  bool quit = false;
  bool shown(View v) const;
  bool* show_flag(View v);
  const bool* show_flag(View v) const { return const_cast<UiState*>(this)->show_flag(v); }
};

}  // namespace kwb::gui
