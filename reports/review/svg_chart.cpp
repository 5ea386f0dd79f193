// The SVG writer: scales, ticks, marks and the frame around them.
#include "reports/review/svg_chart.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace kwb::review {

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // Control characters other than tab and newline are not allowed in XML 1.0 at all.
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n') out += "\xEF\xBF\xBD";
        else out += ch;
    }
  }
  return out;
}

double AxisScale::to_px(double v) const {
  const double t = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
                       : (v - lo) / (hi - lo);
  return px_lo + t * (px_hi - px_lo);
}

bool AxisScale::contains(double v) const {
  if (!std::isfinite(v) || (log && v <= 0)) return false;
  const double slack = log ? 1e-9 : 1e-9 * (hi - lo);
  return log ? (v >= lo * (1 - slack) && v <= hi * (1 + slack)) : (v >= lo - slack && v <= hi + slack);
}

std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> out;
  if (!(lo > 0) || !(hi > lo)) return out;
  const bool fine = std::log10(hi / lo) < 3;
  for (int e = static_cast<int>(std::floor(std::log10(lo))); e <= static_cast<int>(std::ceil(std::log10(hi))); ++e)
    for (double m : fine ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
      const double v = m * std::pow(10.0, e);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back(v);
    }
  return out;
}

std::vector<double> linear_ticks(double lo, double hi, int target_count) {
  std::vector<double> out;
  if (!(hi > lo) || target_count < 1) return out;
  const double raw = (hi - lo) / target_count;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag * 10;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) { step = m * mag; break; }
  // Counted, not stepped until past hi: where the step is below the values' spacing (a sweep at
  // 1e18 + 128 k) adding it changes nothing, and a loop on the value would never end. Such ticks
  // collapse onto one another and are kept once.
  const double first = std::ceil(lo / step - 1e-9);
  const double count = std::floor((hi - first * step) / step + 1e-9);
  if (!(count >= 0)) return out;
  const int n = static_cast<int>(std::min(count, 4.0 * target_count + 4));
  for (int i = 0; i <= n; ++i) {
    const double v = first * step + i * step;
    if (!out.empty() && !(v > out.back())) continue;
    out.push_back(std::abs(v) < 1e-12 * step ? 0.0 : v);
  }
  return out;
}

std::string tick_label(double v) {
  const double a = std::abs(v);
  if (a >= 1e6 && std::fmod(a, 1e6) == 0) return fmt::format("{:g}M", v / 1e6);
  if (a >= 1e3 && std::fmod(a, 1024) == 0 && a >= 1024) return fmt::format("{:g}k", v / 1024);
  if (a >= 1e3 && std::fmod(a, 1e3) == 0) return fmt::format("{:g}k", v / 1e3);
  return fmt::format("{:g}", v);
}

std::pair<double, double> decade_range(double lo, double hi) {
  return {std::pow(10.0, std::floor(std::log10(lo))), std::pow(10.0, std::ceil(std::log10(hi)))};
}

std::string palette_colour(std::size_t index) {
  // Tableau 10: distinct on screen and in greyscale print.
  static const char* kColours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                   "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  return kColours[index % 10];
}

SvgChart::SvgChart(int width_px, int height_px, AxisScale x, AxisScale y, std::string x_label,
                   std::string y_label, std::string aria_label)
    : width_(width_px), height_(height_px), x_(x), y_(y), x_label_(std::move(x_label)),
      y_label_(std::move(y_label)), aria_(std::move(aria_label)) {}

void SvgChart::polyline(const std::vector<std::pair<double, double>>& points, const std::string& colour,
                        bool dashed, double stroke_width) {
  std::string coords;
  for (const auto& [x, y] : points) {
    if (!x_.contains(x) || !y_.contains(y)) continue;
    coords += fmt::format("{}{:.1f},{:.1f}", coords.empty() ? "" : " ", x_.to_px(x), y_.to_px(y));
  }
  if (coords.empty()) return;
  body_ += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{} points=\"{}\"/>\n",
                       xml_escape(colour), stroke_width,
                       dashed ? " stroke-dasharray=\"6,4\"" : "", coords);
}

void SvgChart::point(double x, double y, const std::string& colour, const std::string& tooltip, double r) {
  if (!x_.contains(x) || !y_.contains(y)) return;
  body_ += fmt::format("<circle class=\"pt\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"><title>{}</title></circle>\n",
                       x_.to_px(x), y_.to_px(y), r, xml_escape(colour), xml_escape(tooltip));
}

void SvgChart::ring(double x, double y, const std::string& colour, const std::string& tooltip, double r) {
  if (!x_.contains(x) || !y_.contains(y)) return;
  body_ += fmt::format("<circle class=\"ring\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"#fff\" stroke=\"{}\" "
                       "stroke-width=\"1.8\"><title>{}</title></circle>\n",
                       x_.to_px(x), y_.to_px(y), r, xml_escape(colour), xml_escape(tooltip));
}

void SvgChart::legend_entry(const std::string& text, const std::string& colour, bool dashed, bool ring) {
  legend_.push_back({text, colour, dashed, ring});
}

void SvgChart::legend_mark(const std::string& text, const std::string& colour, int shape) {
  legend_.push_back({text, colour, false, false, shape});
}

namespace {

// The SVG element of a mark centred at (cx, cy): `cls` its class (may be empty), then its place,
// then its fill, then `body` (a tooltip).
std::string mark_element(double cx, double cy, double r, int shape, const std::string& cls, const std::string& fill,
                         const std::string& body) {
  const std::string head = cls.empty() ? "" : " class=\"" + cls + "\"";
  const std::string paint = " fill=\"" + xml_escape(fill) + "\"";
  switch (shape) {
    case 1:
      return fmt::format("<rect{} x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"{}>{}</rect>\n", head,
                         cx - r * 0.9, cy - r * 0.9, 1.8 * r, 1.8 * r, paint, body);
    case 2:
      return fmt::format("<polygon{} points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\"{}>{}</polygon>\n", head, cx,
                         cy - 1.2 * r, cx - 1.1 * r, cy + 0.9 * r, cx + 1.1 * r, cy + 0.9 * r, paint, body);
    case 3:
      return fmt::format("<polygon{} points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\"{}>{}</polygon>\n",
                         head, cx, cy - 1.3 * r, cx + 1.3 * r, cy, cx, cy + 1.3 * r, cx - 1.3 * r, cy, paint, body);
    default:
      return fmt::format("<circle{} cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\"{}>{}</circle>\n", head, cx, cy, r, paint, body);
  }
}

}  // namespace

void SvgChart::mark(double x, double y, const std::string& colour, int shape, const std::string& tooltip, double r) {
  if (!x_.contains(x) || !y_.contains(y)) return;
  body_ += mark_element(x_.to_px(x), y_.to_px(y), r, shape, "pt", colour, "<title>" + xml_escape(tooltip) + "</title>");
}

void SvgChart::placed_text(double x, double y, double angle_degrees, const std::string& text,
                           const std::string& colour) {
  const std::string turn =
      angle_degrees == 0 ? "" : fmt::format(" transform=\"rotate({:.2f} {:.1f} {:.1f})\"", angle_degrees, x, y);
  overlay_ += fmt::format("<text class=\"roof\" x=\"{:.1f}\" y=\"{:.1f}\"{} fill=\"{}\">{}</text>\n", x, y, turn,
                          xml_escape(colour), xml_escape(text));
}

void SvgChart::pixel_line(double x0, double y0, double x1, double y1, const std::string& colour, bool dashed) {
  overlay_ += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"0.8\"{}/>\n",
                          x0, y0, x1, y1, xml_escape(colour), dashed ? " stroke-dasharray=\"2,2\"" : "");
}

std::string SvgChart::axes() const {
  std::string s;
  const double left = std::min(x_.px_lo, x_.px_hi), right = std::max(x_.px_lo, x_.px_hi);
  const double top = std::min(y_.px_lo, y_.px_hi), bottom = std::max(y_.px_lo, y_.px_hi);
  s += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#fff\" stroke=\"#888\"/>\n",
                   left, top, right - left, bottom - top);
  const auto xt = x_.log ? log_ticks(x_.lo, x_.hi) : linear_ticks(x_.lo, x_.hi);
  for (double v : xt) {
    const double px = x_.to_px(v);
    s += fmt::format("<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>\n", px, top, bottom);
    s += fmt::format("<text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", px,
                     bottom + 14, xml_escape(tick_label(v)));
  }
  const auto yt = y_.log ? log_ticks(y_.lo, y_.hi) : linear_ticks(y_.lo, y_.hi);
  for (double v : yt) {
    const double py = y_.to_px(v);
    s += fmt::format("<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\"/>\n", left, py, right);
    s += fmt::format("<text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 5,
                     py + 4, xml_escape(tick_label(v)));
  }
  s += fmt::format("<text class=\"axis\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
                   (left + right) / 2, bottom + 32, xml_escape(x_label_));
  s += fmt::format("<text class=\"axis\" transform=\"translate({:.1f},{:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                   left - 46, (top + bottom) / 2, xml_escape(y_label_));
  return s;
}

std::string SvgChart::str() const {
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 {0} {1}\" {3} role=\"img\" aria-label=\"{2}\">\n",
      width_, height_, xml_escape(aria_),
      fill_width_ ? std::string("width=\"100%\" preserveAspectRatio=\"xMinYMin meet\"")
                  : fmt::format("width=\"{}\" height=\"{}\"", width_, height_));
  s += axes();
  // Marks outside the axes were dropped when added, so nothing crosses the tick labels.
  s += fmt::format("<g>\n{}</g>\n", body_);
  s += overlay_;
  // Legend: right of the plot area (or where legend_at put it), one row per entry.
  const double lx = legend_origin_ ? legend_origin_->first : std::max(x_.px_lo, x_.px_hi) + 12;
  double ly = legend_origin_ ? legend_origin_->second : std::min(y_.px_lo, y_.px_hi) + 8;
  for (const LegendEntry& e : legend_) {
    if (e.shape >= 0) {
      s += mark_element(lx + 9, ly, 4, e.shape, "", e.colour, "");
    } else if (e.ring) {  // a dot joined to a ring, as the marks it names
      s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"1.2\"/>\n",
                       lx + 2, ly, lx + 16, ly, xml_escape(e.colour));
      s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", lx + 2, ly, xml_escape(e.colour));
      s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"#fff\" stroke=\"{}\" stroke-width=\"1.8\"/>\n",
                       lx + 16, ly, xml_escape(e.colour));
    } else {
      s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"3\"{}/>\n",
                       lx, ly, lx + 18, ly, xml_escape(e.colour), e.dashed ? " stroke-dasharray=\"6,4\"" : "");
    }
    s += fmt::format("<text class=\"legend\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", lx + 24, ly + 4, xml_escape(e.text));
    ly += 16;
  }
  s += "</svg>\n";
  return s;
}

}  // namespace kwb::review
