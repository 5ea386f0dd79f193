// The roofline's ranges, roof segments, label placement and marks (see roofline_layout.hpp).
#include "reports/review/roofline_layout.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace kwb::review {
namespace {

using Kind = RooflineCeiling::Kind;

// The DRAM roof a compute roof's ridge is taken with: the first bandwidth roof of its source (the
// DRAM copy, as roofline_ceilings lists them); 0 when there is none.
double dram_of_source(const std::vector<RooflineCeiling>& roofs, bool measured) {
  for (const RooflineCeiling& r : roofs)
    if (r.kind == Kind::bandwidth && r.measured == measured) return r.value;
  return 0;
}

std::string name_of(const RooflineCeiling& r) { return r.name.empty() ? r.label : r.name; }

const RooflineCeiling* twin_of(const std::vector<RooflineCeiling>& roofs, const RooflineCeiling& r) {
  if (r.name.empty()) return nullptr;
  for (const RooflineCeiling& o : roofs)
    if (o.measured != r.measured && o.kind == r.kind && o.name == r.name) return &o;
  return nullptr;
}

}  // namespace

bool boxes_overlap(const PixelBox& a, const PixelBox& b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

bool segment_crosses(const PixelBox& box, double ax, double ay, double bx, double by) {
  // Liang-Barsky: clip the segment's parameter range against each side of the box.
  double t0 = 0, t1 = 1;
  const double dx = bx - ax, dy = by - ay;
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {ax - box.x0, box.x1 - ax, ay - box.y0, box.y1 - ay};
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] < 0) return false;
      continue;
    }
    const double t = q[i] / p[i];
    if (p[i] < 0) t0 = std::max(t0, t);
    else t1 = std::min(t1, t);
    if (t0 > t1) return false;
  }
  return true;
}

bool labels_overlap(const RoofLabel& a, const RoofLabel& b) {
  if (!boxes_overlap(a.box, b.box)) return false;
  // Separating axes: the two rectangles' edge directions.
  for (const RoofLabel* r : {&a, &b})
    for (int e = 0; e < 2; ++e) {
      const auto [x0, y0] = r->corners[e];
      const auto [x1, y1] = r->corners[e + 1];
      const double nx = -(y1 - y0), ny = x1 - x0;
      double a_lo = 1e300, a_hi = -1e300, b_lo = 1e300, b_hi = -1e300;
      for (const auto& [x, y] : a.corners) a_lo = std::min(a_lo, nx * x + ny * y), a_hi = std::max(a_hi, nx * x + ny * y);
      for (const auto& [x, y] : b.corners) b_lo = std::min(b_lo, nx * x + ny * y), b_hi = std::max(b_hi, nx * x + ny * y);
      if (a_hi <= b_lo || b_hi <= a_lo) return false;
    }
  return true;
}

namespace {

// A label of width w and height h whose baseline starts at (x, y) and runs at `angle`.
RoofLabel make_label(std::size_t roof, const std::string& text, double x, double y, double angle, double w, double h,
                     double anchor_x, double anchor_y) {
  RoofLabel l;
  l.roof = roof, l.text = text, l.x = x, l.y = y, l.angle = angle, l.anchor_x = anchor_x, l.anchor_y = anchor_y;
  const double c = std::cos(angle), s = std::sin(angle);
  // Along the text (c, s); "up" from the baseline (s, -c) in screen coordinates.
  const double descent = 0.25 * h, ascent = 0.75 * h;
  l.corners = {{{x - s * descent, y + c * descent},
                {x + c * w - s * descent, y + s * w + c * descent},
                {x + c * w + s * ascent, y + s * w - c * ascent},
                {x + s * ascent, y - c * ascent}}};
  l.box = {1e300, 1e300, -1e300, -1e300};
  for (const auto& [px, py] : l.corners)
    l.box.x0 = std::min(l.box.x0, px), l.box.y0 = std::min(l.box.y0, py), l.box.x1 = std::max(l.box.x1, px),
    l.box.y1 = std::max(l.box.y1, py);
  return l;
}

// Whether a segment passes through a label's rotated rectangle: the segment in the label's own
// frame, against its upright rectangle.
bool segment_crosses_label(const RoofLabel& l, double ax, double ay, double bx, double by, double w, double h) {
  const double c = std::cos(l.angle), s = std::sin(l.angle);
  auto local = [&](double x, double y) {
    const double dx = x - l.x, dy = y - l.y;
    return std::pair{dx * c + dy * s, -(-dx * s + dy * c)};  // (along, up)
  };
  const auto [a0, a1] = local(ax, ay);
  const auto [b0, b1] = local(bx, by);
  return segment_crosses({0, -0.25 * h, w, 0.75 * h}, a0, a1, b0, b1);
}

}  // namespace

RooflineRanges fit_roofline_ranges(const std::vector<RooflineCeiling>& roofs,
                                   const std::vector<std::pair<double, double>>& points) {
  double x_min = std::numeric_limits<double>::max(), x_max = 0;
  double y_min = std::numeric_limits<double>::max(), y_max = 0;
  for (const auto& [x, y] : points) {
    if (!(x > 0) || !(y > 0)) continue;
    x_min = std::min(x_min, x), x_max = std::max(x_max, x);
    y_min = std::min(y_min, y), y_max = std::max(y_max, y);
  }
  double ridge_max = 0, ridge_min = std::numeric_limits<double>::max(), compute_max = 0;
  for (const RooflineCeiling& r : roofs) {
    if (r.kind != Kind::compute || r.value <= 0) continue;
    compute_max = std::max(compute_max, r.value);
    if (const double dram = dram_of_source(roofs, r.measured); dram > 0)
      ridge_max = std::max(ridge_max, 1000 * r.value / dram), ridge_min = std::min(ridge_min, 1000 * r.value / dram);
  }
  RooflineRanges out;
  if (x_max <= 0) {  // no points: the roofs alone
    x_min = ridge_max > 0 ? ridge_max / 100 : 0.1;
    x_max = ridge_max > 0 ? ridge_max : 100;
    y_min = compute_max > 0 ? compute_max / 1000 : 0.1;
    y_max = compute_max > 0 ? compute_max : 100;
  }
  // Every knee in view: the lowest ridge too, where the points all lie beyond it (a GEMM ladder).
  out.x_lo = std::min(x_min / 1.6, ridge_max > 0 ? ridge_min / 2 : x_min / 1.6);
  out.x_hi = std::max(x_max * 1.6, ridge_max * 1.5);
  out.y_lo = y_min / 2;
  out.y_hi = std::max(y_max, compute_max) * 1.4;
  return out;
}

std::vector<RoofSegment> roof_segments(const std::vector<RooflineCeiling>& roofs, const RooflineRanges& r) {
  std::vector<RoofSegment> out;
  for (std::size_t i = 0; i < roofs.size(); ++i) {
    const RooflineCeiling& c = roofs[i];
    if (c.value <= 0) continue;
    if (c.kind == Kind::bandwidth) {
      double top = 0;  // the highest compute roof of the same source; none: the top of the range
      for (const RooflineCeiling& d : roofs)
        if (d.kind == Kind::compute && d.measured == c.measured) top = std::max(top, d.value);
      top = top > 0 ? std::min(top, r.y_hi) : r.y_hi;
      const double x0 = std::max(r.x_lo, 1000 * r.y_lo / c.value);
      const double x1 = std::min(r.x_hi, 1000 * top / c.value);
      if (x1 <= x0) continue;
      out.push_back({i, x0, x0 * c.value / 1000, x1, x1 * c.value / 1000});
    } else {
      if (c.value < r.y_lo || c.value > r.y_hi) continue;
      const double dram = dram_of_source(roofs, c.measured);
      const double ridge = dram > 0 ? 1000 * c.value / dram : r.x_lo;
      const double x0 = std::clamp(ridge, r.x_lo, r.x_hi);
      if (x0 >= r.x_hi) continue;
      out.push_back({i, x0, c.value, r.x_hi, c.value});
    }
  }
  return out;
}

std::vector<std::string> roof_label_texts(const std::vector<RooflineCeiling>& roofs, const std::vector<bool>& drawn) {
  std::vector<std::string> out;
  for (const RooflineCeiling& r : roofs) {
    const RooflineCeiling* twin = twin_of(roofs, r);
    if (twin && !drawn.empty() && !drawn[static_cast<std::size_t>(twin - roofs.data())]) twin = nullptr;
    if (r.name.empty()) {
      out.push_back(r.label);
    } else if (!r.measured) {
      out.push_back(twin ? "" : r.name + " " + r.value_text + " (datasheet)");
    } else {
      std::string text = r.name + " " + r.value_text;
      if (twin) text += " (datasheet " + twin->value_text.substr(0, twin->value_text.find(' ')) + ")";
      out.push_back(text);
    }
  }
  return out;
}

std::vector<RoofLabel> place_roof_labels(const std::vector<RooflineCeiling>& roofs,
                                         const std::vector<RoofSegment>& segments, const RoofLabelGeometry& g) {
  std::vector<bool> drawn(roofs.size(), false);
  for (const RoofSegment& s : segments) drawn[s.roof] = true;
  const std::vector<std::string> texts = roof_label_texts(roofs, drawn);
  const double h = g.line_height;
  std::vector<RoofLabel> placed;
  auto free_of_labels = [&](const RoofLabel& l) {
    return std::none_of(placed.begin(), placed.end(), [&](const RoofLabel& o) { return labels_overlap(o, l); });
  };

  // 1. Compute roofs: in the side column at their line's height (the baseline a quarter line
  //    below it), top first, each pushed below the one above where they would overlap; then, if
  //    the last runs off the column, all lifted.
  std::vector<RoofLabel> flat;
  for (const RoofSegment& s : segments) {
    const std::string& text = texts[s.roof];
    if (roofs[s.roof].kind != Kind::compute || text.empty()) continue;
    const double y = g.y_px(s.y1);
    flat.push_back(make_label(s.roof, text, g.side.x0, y + 0.25 * h, 0, g.text_width(text), h, g.x_px(s.x1), y));
  }
  std::sort(flat.begin(), flat.end(), [](const RoofLabel& a, const RoofLabel& b) { return a.anchor_y < b.anchor_y; });
  auto shift = [&](RoofLabel& l, double dy) {
    l = make_label(l.roof, l.text, l.x, l.y + dy, 0, g.text_width(l.text), h, l.anchor_x, l.anchor_y);
  };
  for (std::size_t i = 1; i < flat.size(); ++i)
    if (const double overlap = flat[i - 1].box.y1 + 1 - flat[i].box.y0; overlap > 0) shift(flat[i], overlap);
  if (!flat.empty() && flat.back().box.y1 > g.side.y1) {
    const double lift = std::min(flat.back().box.y1 - g.side.y1, flat.front().box.y0 - g.side.y0);
    if (lift > 0)
      for (RoofLabel& l : flat) shift(l, -lift);
  }
  placed.insert(placed.end(), flat.begin(), flat.end());

  // 2. Bandwidth roofs: along the line, turned to its slope, the baseline just above it (the side
  //    above a roof holds no case). Tried at several points of the line, the upper half first
  //    (the cases crowd the lower end); the first inside the plot and clear of every label and of
  //    the other roofs wins, else the first clear of the labels.
  for (const RoofSegment& s : segments) {
    const std::string& text = texts[s.roof];
    if (roofs[s.roof].kind != Kind::bandwidth || text.empty()) continue;
    const double w = g.text_width(text);
    const double ax0 = g.x_px(s.x0), ay0 = g.y_px(s.y0), ax1 = g.x_px(s.x1), ay1 = g.y_px(s.y1);
    const double length = std::hypot(ax1 - ax0, ay1 - ay0);
    if (length <= 0) continue;
    const double c = (ax1 - ax0) / length, sn = (ay1 - ay0) / length, angle = std::atan2(ay1 - ay0, ax1 - ax0);
    const double room = 1 - (w + 8) / length;  // the start's last place that keeps the text on the line
    std::optional<RoofLabel> best, fallback;
    for (double t : {0.55, 0.7, 0.4, 0.85, 0.25, 1.0, 0.1, 0.0}) {
      const double start = std::max(0.0, t * room) * length + 4;
      const double bx = ax0 + c * start, by = ay0 + sn * start;
      // 3 px above the line: "up" from the baseline is (sin, -cos) of the angle.
      const RoofLabel l = make_label(s.roof, text, bx + sn * 3, by - c * 3, angle, w, h, bx, by);
      const bool inside = l.box.x0 >= g.plot.x0 && l.box.x1 <= g.plot.x1 && l.box.y0 >= g.plot.y0 &&
                          l.box.y1 <= g.plot.y1;
      if (!inside || !free_of_labels(l)) continue;
      const bool crosses = std::any_of(segments.begin(), segments.end(), [&](const RoofSegment& o) {
        return o.roof != s.roof &&
               segment_crosses_label(l, g.x_px(o.x0), g.y_px(o.y0), g.x_px(o.x1), g.y_px(o.y1), w, h);
      });
      if (!crosses) {
        best = l;
        break;
      }
      if (!fallback) fallback = l;
    }
    if (!best) best = fallback;
    if (!best) {  // nowhere along the line: in the side column, below what is there, at the line's end
      double y = ay1 + 0.25 * h;
      for (const RoofLabel& o : placed)
        if (o.box.x0 >= g.side.x0) y = std::max(y, o.box.y1 + 1 + 0.75 * h);
      best = make_label(s.roof, text, g.side.x0, y, 0, w, h, ax1, ay1);
    }
    placed.push_back(*best);
  }
  return placed;
}

MarkStyle mark_style(std::size_t index) {
  static constexpr MarkShape kShapes[] = {MarkShape::circle, MarkShape::square, MarkShape::triangle,
                                          MarkShape::diamond};
  return {index % 10, kShapes[(index / 10) % 4]};
}

}  // namespace kwb::review
