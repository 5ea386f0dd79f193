// The plotting module every chart draws with: a frame with axes, ticks and labels on ImDrawList,
// zoom (mouse wheel, around the cursor), pan (drag), reset (double-click), the hovered item
// (nearest within a few pixels) and a legend. No plotting library is packaged on the target
// machines, so this is the whole of it: a chart is
//
//   plot::Plot p("roofline", view, size, "FLOP/byte", "TFLOP/s");
//   p.line(...); if (p.point(x, y, colour)) hovered = i;  ...  p.legend_at(entries, p.side_min());
//   p.end();
//
// The View holds what persists between frames (the zoomed ranges); a chart fits it to its data
// once, and again when the data changes (View::fit_key).
#pragma once

#include <imgui.h>

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "gui/plot/scale.hpp"

namespace kwb::gui::plot {

struct View {
  Scale x, y;
  std::string fit_key;  // what the ranges were last fitted to; a different key refits
};

struct LegendEntry {
  std::string label;
  ImU32 colour = 0;
  bool dashed = false;
  // What stands before the label: a line (a roof, a series) or a point's own mark.
  enum class Glyph { line, dot, hollow_dot, ring } glyph = Glyph::line;
  int shape = 0;  // of a dot: as Plot::point
};

class Plot {
 public:
  // `side_width`: a column right of the plotting area, inside the frame, for labels and a legend
  // (side_min()/side_max()); the marks stay clipped to the area.
  Plot(const char* id, View& view, ImVec2 size, const char* x_label, const char* y_label, float side_width = 0);
  Plot(const Plot&) = delete;
  Plot& operator=(const Plot&) = delete;
  ~Plot();

  ImVec2 to_screen(double x, double y) const;
  ImDrawList* draw_list() const { return dl_; }
  ImVec2 area_min() const { return area_min_; }
  ImVec2 area_max() const { return area_max_; }
  ImVec2 side_min() const { return {area_max_.x + 8, area_min_.y}; }
  ImVec2 side_max() const { return {frame_max_.x, area_max_.y}; }
  bool hovered() const { return hovered_; }
  // A click on the plot that was not a drag (selects the hovered item).
  bool clicked() const { return clicked_; }

  void line(double x0, double y0, double x1, double y1, ImU32 colour, float thickness = 1.5f,
            bool dashed = false);
  void polyline(const std::vector<std::pair<double, double>>& points, ImU32 colour,
                float thickness = 2.0f);
  // A filled dot; true when the mouse is the nearest to it so far within its hover radius (the
  // last true one in a frame is the hovered item: ask `nearest()` after drawing every point).
  // `shape`: 0 circle, 1 square, 2 triangle, 3 diamond (review::mark_style's order).
  bool point(double x, double y, ImU32 colour, float radius = 4.0f, int id = -1, int shape = 0);
  int nearest() const { return nearest_id_; }
  // The same as point() drawn as a ring around a white centre: a second point of one item (the
  // roofline's measured point beside its model point).
  bool hollow_point(double x, double y, ImU32 colour, float radius = 4.5f, int id = -1);
  void ring(double x, double y, ImU32 colour, float radius);  // highlight of the selected item
  void text(double x, double y, const char* text, ImU32 colour, ImVec2 offset = {4, -14});
  // Text in screen pixels, the start of its baseline at `at`, turned by `angle` (radians; negative
  // turns it up to the right), drawn over everything and not clipped to the area.
  void text_at(ImVec2 at, float angle, const char* text, ImU32 colour);
  void screen_line(ImVec2 a, ImVec2 b, ImU32 colour, float thickness = 1.0f);  // not clipped either
  // A legend with its top-left at `at` (screen pixels; the side column), drawn over the frame.
  void legend_at(const std::vector<LegendEntry>& entries, ImVec2 at);
  void end();  // pops the clip rect (the destructor calls it when not called)

 private:
  void handle_input();
  void push_frame_clip();  // the frame within the window, over the area's clip
  void draw_axes();
  bool hover_test(ImVec2 p, int id);  // true when p is the nearest to the mouse so far

  View& view_;
  ImDrawList* dl_ = nullptr;
  ImVec2 frame_min_, frame_max_;  // the whole widget
  ImVec2 area_min_, area_max_;    // the plotting area inside the axes
  ImVec2 outer_min_, outer_max_;  // the window's clip rectangle when the plot began
  const char* x_label_;
  const char* y_label_;
  bool hovered_ = false, clicked_ = false, ended_ = false;
  float nearest_dist2_ = 0;
  int nearest_id_ = -1;
  int points_drawn_ = 0;
  std::unordered_set<std::uint64_t> drawn_pixels_;  // of the points, this frame
};

// A qualitative palette (Tableau 10), the same as the review report's: op i gets colour i.
ImU32 palette(int i, float alpha = 1.0f);

}  // namespace kwb::gui::plot
