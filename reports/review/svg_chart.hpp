// A small SVG writer for the review report's charts: linear or log axes with tick labels,
// polylines, points with a tooltip, text labels and a legend.
//
// Data coordinates go in; the writer maps them to pixels, drops what lies outside the axes
// (a point off a log axis has no place), and XML-escapes every piece of text, since op, variant
// and case names come from the report and may hold any character.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kwb::review {

// Text safe inside an XML/HTML element or a double-quoted attribute.
std::string xml_escape(std::string_view text);

// Data -> pixel along one axis. For a log axis lo and hi must be > 0.
struct AxisScale {
  double lo = 0, hi = 1;
  bool log = false;
  double px_lo = 0, px_hi = 1;  // pixel of lo and of hi (y axes run bottom-up: px_lo > px_hi)
  double to_px(double v) const;
  bool contains(double v) const;  // within [lo, hi] (with a little slack for rounding)
};

// Tick positions: powers of ten on a log axis (with 2 and 5 between when it spans under three
// decades), "nice" steps of 1, 2 or 5 times a power of ten on a linear one.
std::vector<double> log_ticks(double lo, double hi);
std::vector<double> linear_ticks(double lo, double hi, int target_count = 6);
// "0.01", "1", "1k", "16k", "2.5": short, exact enough for a tick.
std::string tick_label(double v);

// The smallest power-of-ten range holding [lo, hi] (lo, hi > 0).
std::pair<double, double> decade_range(double lo, double hi);

// A colour per series, distinct for the first ten and repeating after.
std::string palette_colour(std::size_t index);

class SvgChart {
 public:
  SvgChart(int width_px, int height_px, AxisScale x, AxisScale y, std::string x_label,
           std::string y_label, std::string aria_label);

  void polyline(const std::vector<std::pair<double, double>>& points, const std::string& colour,
                bool dashed, double stroke_width = 1.5);
  // A filled circle with a <title> tooltip.
  void point(double x, double y, const std::string& colour, const std::string& tooltip, double r = 3.5);
  // A hollow circle (white inside, `colour` around) with a tooltip: a second mark of a case that
  // point() draws, such as its measured position beside its model position.
  void ring(double x, double y, const std::string& colour, const std::string& tooltip, double r = 3.5);
  // A legend row: a line sample (dashed or solid), or with `ring` a line ending in a ring (a
  // point joined to its hollow twin).
  void legend_entry(const std::string& text, const std::string& colour, bool dashed = false, bool ring = false);
  // A legend row whose sample is a point's mark (circle, square, triangle, diamond: see
  // roofline_layout.hpp's mark_style).
  void legend_mark(const std::string& text, const std::string& colour, int shape);
  // Where the legend's first row goes (pixels); by default right of the plot area, at its top.
  void legend_at(double x_px, double y_px) { legend_origin_ = {x_px, y_px}; }

  // A filled mark of `shape` (0 circle, 1 square, 2 triangle, 3 diamond) with a tooltip.
  void mark(double x, double y, const std::string& colour, int shape, const std::string& tooltip, double r = 3.5);
  // Text whose place was decided by the caller (pixels: the start of its baseline, turned by the
  // angle), and a thin line in pixels (a label's leader); both may lie outside the axes.
  void placed_text(double x, double y, double angle_degrees, const std::string& text, const std::string& colour);
  void pixel_line(double x0, double y0, double x1, double y1, const std::string& colour, bool dashed);
  // The chart scales to the width of the page (its viewBox keeps the proportions).
  void fill_width() { fill_width_ = true; }

  // The whole <svg> element.
  std::string str() const;

  const AxisScale& x() const { return x_; }
  const AxisScale& y() const { return y_; }

 private:
  std::string axes() const;
  int width_, height_;
  AxisScale x_, y_;
  std::string x_label_, y_label_, aria_;
  std::string body_;
  std::string overlay_;  // drawn over the marks: labels and leaders placed by the caller
  struct LegendEntry {
    std::string text, colour;
    bool dashed = false, ring = false;
    int shape = -1;  // a mark's shape, or -1 for a line sample
  };
  std::vector<LegendEntry> legend_;
  std::optional<std::pair<double, double>> legend_origin_;
  bool fill_width_ = false;
};

}  // namespace kwb::review
