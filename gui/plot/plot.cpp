// The plotting module on ImDrawList (see plot.hpp).
#include "gui/plot/plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace kwb::gui::plot {

namespace {

constexpr float kLeftMargin = 64, kBottomMargin = 40, kTopMargin = 8, kRightMargin = 16;
constexpr float kHoverRadius = 6;
constexpr int kDensePoints = 1500;  // past this many points in one plot, points are squares

ImU32 grey(int v, int a = 255) { return IM_COL32(v, v, v, a); }

// A filled mark centred at p: 0 circle, 1 square, 2 triangle, 3 diamond.
void draw_mark(ImDrawList* dl, ImVec2 p, float r, ImU32 colour, int shape) {
  switch (shape) {
    case 1: dl->AddRectFilled({p.x - r * 0.9f, p.y - r * 0.9f}, {p.x + r * 0.9f, p.y + r * 0.9f}, colour); break;
    case 2:
      dl->AddTriangleFilled({p.x, p.y - 1.2f * r}, {p.x + 1.1f * r, p.y + 0.9f * r}, {p.x - 1.1f * r, p.y + 0.9f * r},
                            colour);
      break;
    case 3:
      dl->AddQuadFilled({p.x, p.y - 1.3f * r}, {p.x + 1.3f * r, p.y}, {p.x, p.y + 1.3f * r}, {p.x - 1.3f * r, p.y},
                        colour);
      break;
    default: dl->AddCircleFilled(p, r, colour, 12);
  }
}

}  // namespace

ImU32 palette(int i, float alpha) {
  static const ImU32 kColours[] = {
      IM_COL32(0x4e, 0x79, 0xa7, 255), IM_COL32(0xf2, 0x8e, 0x2b, 255),
      IM_COL32(0xe1, 0x57, 0x59, 255), IM_COL32(0x76, 0xb7, 0xb2, 255),
      IM_COL32(0x59, 0xa1, 0x4f, 255), IM_COL32(0xed, 0xc9, 0x48, 255),
      IM_COL32(0xb0, 0x7a, 0xa1, 255), IM_COL32(0xff, 0x9d, 0xa7, 255),
      IM_COL32(0x9c, 0x75, 0x5f, 255), IM_COL32(0xba, 0xb0, 0xac, 255)};
  ImU32 c = kColours[(i % 10 + 10) % 10];
  return (c & ~IM_COL32_A_MASK) | (static_cast<ImU32>(alpha * 255) << IM_COL32_A_SHIFT);
}

Plot::Plot(const char* id, View& view, ImVec2 size, const char* x_label, const char* y_label, float side_width)
    : view_(view), x_label_(x_label), y_label_(y_label) {
  if (size.x <= 0) size.x = std::max(ImGui::GetContentRegionAvail().x, 100.0f);
  if (size.y <= 0) size.y = std::max(ImGui::GetContentRegionAvail().y, 100.0f);
  frame_min_ = ImGui::GetCursorScreenPos();
  frame_max_ = {frame_min_.x + size.x, frame_min_.y + size.y};
  // The margins hold tick labels: they grow with the text size (View > Text size).
  const float text = ImGui::GetFontSize() / 13.0f;
  area_min_ = {frame_min_.x + kLeftMargin * text, frame_min_.y + kTopMargin * text};
  area_max_ = {frame_max_.x - kRightMargin * text - side_width, frame_max_.y - kBottomMargin * text};
  // A window too small for the margins and the side column still has an area (zoom divides by it).
  area_max_ = {std::max(area_max_.x, area_min_.x + 1), std::max(area_max_.y, area_min_.y + 1)};
  // One invisible button over the whole frame owns the mouse: the window does not move while
  // the plot is dragged, and hover/click are this widget's.
  ImGui::InvisibleButton(id, size, ImGuiButtonFlags_MouseButtonLeft);
  dl_ = ImGui::GetWindowDrawList();
  handle_input();
  draw_axes();
  // What may be drawn outside the area (the side column's labels, the legend) stays inside both
  // the frame and the window: the window's clip is the one in force before the area's.
  outer_min_ = dl_->GetClipRectMin();
  outer_max_ = dl_->GetClipRectMax();
  dl_->PushClipRect(area_min_, area_max_, true);
}

Plot::~Plot() { end(); }

void Plot::end() {
  if (ended_) return;
  ended_ = true;
  dl_->PopClipRect();
}

void Plot::handle_input() {
  const ImGuiIO& io = ImGui::GetIO();
  hovered_ = ImGui::IsItemHovered();
  const float w = area_max_.x - area_min_.x, h = area_max_.y - area_min_.y;
  if (hovered_ && io.MouseWheel != 0) {
    const double factor = std::pow(0.85, io.MouseWheel);
    view_.x.zoom(factor, (io.MousePos.x - area_min_.x) / w);
    view_.y.zoom(factor, 1.0 - (io.MousePos.y - area_min_.y) / h);
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 2.0f)) {
    view_.x.pan(-io.MouseDelta.x / w);
    view_.y.pan(io.MouseDelta.y / h);
  }
  if (hovered_ && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left))
    view_.fit_key.clear();  // refit next frame
  // A click is a release without a drag: dragging pans, it must not also select.
  clicked_ = ImGui::IsItemDeactivated() &&
             ImGui::GetMouseDragDelta(ImGuiMouseButton_Left, 2.0f).x == 0 &&
             ImGui::GetMouseDragDelta(ImGuiMouseButton_Left, 2.0f).y == 0 && hovered_;
  nearest_dist2_ = kHoverRadius * kHoverRadius * 4;
}

ImVec2 Plot::to_screen(double x, double y) const {
  const float ux = static_cast<float>(view_.x.to_unit(x)),
              uy = static_cast<float>(view_.y.to_unit(y));
  return {area_min_.x + ux * (area_max_.x - area_min_.x),
          area_max_.y - uy * (area_max_.y - area_min_.y)};
}

void Plot::draw_axes() {
  dl_->AddRectFilled(area_min_, area_max_, IM_COL32(255, 255, 255, 255));
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  for (const Tick& t : ticks(view_.x)) {
    const float sx = to_screen(t.value, view_.y.lo).x;
    dl_->AddLine({sx, area_min_.y}, {sx, area_max_.y}, t.major ? grey(215) : grey(238));
    if (!t.label.empty()) {
      const ImVec2 ts = ImGui::CalcTextSize(t.label.c_str());
      dl_->AddText({sx - ts.x / 2, area_max_.y + 4}, text, t.label.c_str());
    }
  }
  // A chart without a y label (the case detail's summary box) has no y scale worth reading.
  for (const Tick& t : y_label_[0] ? ticks(view_.y, 5) : std::vector<Tick>{}) {
    const float sy = to_screen(view_.x.lo, t.value).y;
    dl_->AddLine({area_min_.x, sy}, {area_max_.x, sy}, t.major ? grey(215) : grey(238));
    if (!t.label.empty()) {
      const ImVec2 ts = ImGui::CalcTextSize(t.label.c_str());
      dl_->AddText({area_min_.x - ts.x - 6, sy - ts.y / 2}, text, t.label.c_str());
    }
  }
  dl_->AddRect(area_min_, area_max_, grey(120));
  const ImVec2 xs = ImGui::CalcTextSize(x_label_);
  dl_->AddText({(area_min_.x + area_max_.x - xs.x) / 2, area_max_.y + 20}, text, x_label_);
  dl_->AddText({frame_min_.x + 2, frame_min_.y}, text, y_label_);
}

void Plot::line(double x0, double y0, double x1, double y1, ImU32 colour, float thickness,
                bool dashed) {
  const ImVec2 a = to_screen(x0, y0), b = to_screen(x1, y1);
  if (!dashed) {
    dl_->AddLine(a, b, colour, thickness);
    return;
  }
  const float dx = b.x - a.x, dy = b.y - a.y, len = std::sqrt(dx * dx + dy * dy);
  if (len < 1) return;
  // Only the dashes on screen are drawn: a zoomed-in roof can be millions of pixels long.
  const float step = 10;
  float from = 0, to = len;
  auto clamp_t = [&](float lo_edge, float hi_edge, float p, float d) {
    if (std::fabs(d) < 1e-6f) return;
    float t0 = (lo_edge - p) / d * len, t1 = (hi_edge - p) / d * len;
    if (t0 > t1) std::swap(t0, t1);
    from = std::max(from, t0), to = std::min(to, t1);
  };
  clamp_t(area_min_.x, area_max_.x, a.x, dx);
  clamp_t(area_min_.y, area_max_.y, a.y, dy);
  from = std::floor(from / (2 * step)) * 2 * step;
  for (float t = std::max(from, 0.0f); t < to; t += 2 * step) {
    const float t1 = std::min(t + step, len);
    dl_->AddLine({a.x + dx * t / len, a.y + dy * t / len},
                 {a.x + dx * t1 / len, a.y + dy * t1 / len}, colour, thickness);
  }
}

void Plot::polyline(const std::vector<std::pair<double, double>>& points, ImU32 colour,
                    float thickness) {
  for (std::size_t i = 1; i < points.size(); ++i)
    dl_->AddLine(to_screen(points[i - 1].first, points[i - 1].second),
                 to_screen(points[i].first, points[i].second), colour, thickness);
}

bool Plot::point(double x, double y, ImU32 colour, float radius, int id, int shape) {
  const ImVec2 p = to_screen(x, y);
  // Off-screen points cost nothing; on screen, a dense chart draws squares (2 triangles, not a
  // 12-sided fan): 10,000 cases must stay interactive under software OpenGL.
  if (p.x < area_min_.x - radius || p.x > area_max_.x + radius || p.y < area_min_.y - radius ||
      p.y > area_max_.y + radius)
    return false;
  // A point on the same pixel in the same colour as one already drawn adds nothing to the
  // picture, only triangles (software OpenGL pays per triangle): drawn once.
  const std::uint64_t pixel = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(p.x)) << 48) ^
                              (static_cast<std::uint64_t>(static_cast<std::uint32_t>(p.y)) << 32) ^
                              colour;
  if (!drawn_pixels_.insert(pixel).second) {
    // already drawn there: only the hover test below
  } else if (++points_drawn_ > kDensePoints)
    dl_->AddRectFilled({p.x - radius * 0.8f, p.y - radius * 0.8f},
                       {p.x + radius * 0.8f, p.y + radius * 0.8f}, colour);
  else
    draw_mark(dl_, p, radius, colour, shape);
  return hover_test(p, id);
}

bool Plot::hollow_point(double x, double y, ImU32 colour, float radius, int id) {
  const ImVec2 p = to_screen(x, y);
  if (p.x < area_min_.x - radius || p.x > area_max_.x + radius || p.y < area_min_.y - radius ||
      p.y > area_max_.y + radius)
    return false;
  dl_->AddCircleFilled(p, radius, IM_COL32(255, 255, 255, 255), 12);
  dl_->AddCircle(p, radius, colour, 12, 2.0f);
  return hover_test(p, id);
}

bool Plot::hover_test(ImVec2 p, int id) {
  if (!hovered_) return false;
  const ImVec2 m = ImGui::GetIO().MousePos;
  const float d2 = (m.x - p.x) * (m.x - p.x) + (m.y - p.y) * (m.y - p.y);
  if (d2 > nearest_dist2_) return false;
  nearest_dist2_ = d2;
  nearest_id_ = id;
  return true;
}

void Plot::ring(double x, double y, ImU32 colour, float radius) {
  dl_->AddCircle(to_screen(x, y), radius, colour, 16, 2.5f);
}

void Plot::text(double x, double y, const char* s, ImU32 colour, ImVec2 offset) {
  const ImVec2 p = to_screen(x, y);
  dl_->AddText({p.x + offset.x, p.y + offset.y}, colour, s);
}

void Plot::text_at(ImVec2 at, float angle, const char* s, ImU32 colour) {
  push_frame_clip();
  // The text is drawn upright with its top-left a line's ascent above the baseline, then its
  // vertices are turned about the baseline's start (ImGui has no turned text of its own).
  const int first = dl_->VtxBuffer.Size;
  const float ascent = ImGui::GetFontSize() * 0.8f;
  dl_->AddText({at.x, at.y - ascent}, colour, s);
  if (angle != 0) {
    const float c = std::cos(angle), sn = std::sin(angle);
    for (int i = first; i < dl_->VtxBuffer.Size; ++i) {
      ImVec2& v = dl_->VtxBuffer[i].pos;
      const float dx = v.x - at.x, dy = v.y - at.y;
      v = {at.x + dx * c - dy * sn, at.y + dx * sn + dy * c};
    }
  }
  dl_->PopClipRect();
}

void Plot::push_frame_clip() {
  dl_->PushClipRect({std::max(frame_min_.x, outer_min_.x), std::max(frame_min_.y, outer_min_.y)},
                    {std::min(frame_max_.x, outer_max_.x), std::min(frame_max_.y, outer_max_.y)}, false);
}

void Plot::screen_line(ImVec2 a, ImVec2 b, ImU32 colour, float thickness) {
  push_frame_clip();
  dl_->AddLine(a, b, colour, thickness);
  dl_->PopClipRect();
}

void Plot::legend_at(const std::vector<LegendEntry>& entries, ImVec2 at) {
  if (entries.empty()) return;
  push_frame_clip();
  const float line_h = ImGui::GetTextLineHeight() + 2;
  float width = 0;
  for (const auto& e : entries) width = std::max(width, ImGui::CalcTextSize(e.label.c_str()).x);
  const ImVec2 box_max{at.x + width + 34, at.y + line_h * entries.size() + 6};
  dl_->AddRectFilled(at, box_max, IM_COL32(255, 255, 255, 220));
  dl_->AddRect(at, box_max, grey(180));
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const float y = at.y + 4 + line_h * i + line_h / 2 - 1;
    const ImU32 c = entries[i].colour;
    using Glyph = LegendEntry::Glyph;
    if (entries[i].glyph == Glyph::dot) {
      draw_mark(dl_, {at.x + 13, y}, 4, c, entries[i].shape);
    } else if (entries[i].glyph == Glyph::hollow_dot) {
      dl_->AddCircleFilled({at.x + 13, y}, 4.5f, IM_COL32(255, 255, 255, 255), 12);
      dl_->AddCircle({at.x + 13, y}, 4.5f, c, 12, 2.0f);
    } else if (entries[i].glyph == Glyph::ring) {
      dl_->AddCircle({at.x + 13, y}, 7, c, 16, 2.0f);
    } else if (entries[i].dashed) {
      dl_->AddLine({at.x + 4, y}, {at.x + 10, y}, c, 2);
      dl_->AddLine({at.x + 16, y}, {at.x + 22, y}, c, 2);
    } else {
      dl_->AddLine({at.x + 4, y}, {at.x + 22, y}, c, 2.5f);
    }
    dl_->AddText({at.x + 28, y - line_h / 2 + 1}, grey(30), entries[i].label.c_str());
  }
  dl_->PopClipRect();
}

}  // namespace kwb::gui::plot
