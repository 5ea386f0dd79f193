// Where the roofline's parts go, computed once for both the review's SVG and the app's window: the
// axis ranges fitted to the points with every roof's knee in view, the roofs as segments, and
// each roof's label placed so that no two labels overlap. A flat (compute) roof is labelled at its
// line's right end, in a column beside the plot, the labels stacked where their lines crowd; a
// sloped (bandwidth) roof along its line, turned to its slope and just above it (the side no case
// can reach), clear of the other roofs and labels. A measured roof and its datasheet twin share one label ("bf16
// tensor 821 TFLOP/s (datasheet 989)"): the dashed line tells the datasheet's apart.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "reports/review/review_model.hpp"

namespace kwb::review {

struct PixelBox {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // y grows downwards, as on a screen
  double width() const { return x1 - x0; }
  double height() const { return y1 - y0; }
};
bool boxes_overlap(const PixelBox& a, const PixelBox& b);
// Whether the segment (ax, ay)-(bx, by) passes through the box.
bool segment_crosses(const PixelBox& box, double ax, double ay, double bx, double by);

// Log axes' data ranges: every point (and measured point) with room around it, every ridge (where
// a compute roof meets the DRAM slope of its source) and the highest compute roof in view. Not
// whole decades: the data of a review spans one or two.
struct RooflineRanges {
  double x_lo = 0.1, x_hi = 100, y_lo = 0.1, y_hi = 100;
};
RooflineRanges fit_roofline_ranges(const std::vector<RooflineCeiling>& roofs,
                                   const std::vector<std::pair<double, double>>& points);

// A roof as drawn, in data coordinates: a bandwidth roof from where it enters the ranges to where
// it meets the highest compute roof of its source (or leaves them); a compute roof from its ridge
// to the right edge. Roofs wholly outside the ranges are left out.
struct RoofSegment {
  std::size_t roof = 0;  // index into the roofs
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};
std::vector<RoofSegment> roof_segments(const std::vector<RooflineCeiling>& roofs, const RooflineRanges& r);

// Per roof, its label's text: empty for a datasheet roof whose measured twin carries it. With
// `drawn` (per roof: has a segment in view), a twin that is not drawn carries nothing.
std::vector<std::string> roof_label_texts(const std::vector<RooflineCeiling>& roofs,
                                          const std::vector<bool>& drawn = {});

// A label's place: the text starts at (x, y) on its baseline and runs at `angle` (radians, screen
// coordinates: negative turns it up to the right, along a rising roof); `corners` is the rotated
// rectangle the text fills, `box` the upright box around it. Overlap is judged on the corners.
struct RoofLabel {
  std::size_t roof = 0;
  std::string text;
  double x = 0, y = 0, angle = 0;
  std::array<std::pair<double, double>, 4> corners{};
  PixelBox box;
  double anchor_x = 0, anchor_y = 0;  // the point of its line the label names (pixels)
};
bool labels_overlap(const RoofLabel& a, const RoofLabel& b);

struct RoofLabelGeometry {
  std::function<double(double)> x_px, y_px;  // data -> pixels on the plot
  PixelBox plot;  // the plotting area
  PixelBox side;  // the column right of it where the compute roofs' labels stack
  std::function<double(const std::string&)> text_width;
  double line_height = 12;
};
// No two returned labels overlap; every roof with a segment and a text gets one. Sloped roofs'
// lie inside `plot` along their lines, or, where no place along the line is free (a short line in
// a narrow plot), in `side` as the flat ones do; renderers join a side label to its anchor.
std::vector<RoofLabel> place_roof_labels(const std::vector<RooflineCeiling>& roofs,
                                         const std::vector<RoofSegment>& segments, const RoofLabelGeometry& g);

// How the i-th op (or variant) is marked: ten colours, then the same ten with another shape, so no
// two series of one chart look alike up to 40.
enum class MarkShape { circle, square, triangle, diamond };
struct MarkStyle {
  std::size_t colour = 0;  // index into the palette (palette_colour, plot::palette)
  MarkShape shape = MarkShape::circle;
};
MarkStyle mark_style(std::size_t index);

}  // namespace kwb::review
