// Scales and ticks (see scale.hpp).
#include "gui/plot/scale.hpp"

#include <algorithm>
#include <cmath>

#include "gui/model/units.hpp"

namespace kwb::gui::plot {

double Scale::forward(double v) const { return log ? std::log10(std::max(v, 1e-300)) : v; }
double Scale::inverse(double m) const { return log ? std::pow(10.0, m) : m; }

double Scale::to_unit(double v) const {
  const double a = forward(lo), b = forward(hi);
  return b == a ? 0.5 : (forward(v) - a) / (b - a);
}

double Scale::from_unit(double u) const {
  const double a = forward(lo), b = forward(hi);
  return inverse(a + u * (b - a));
}

void Scale::zoom(double factor, double u) {
  const double a = forward(lo), b = forward(hi);
  const double centre = a + u * (b - a);
  lo = inverse(centre - (centre - a) * factor);
  hi = inverse(centre + (b - centre) * factor);
}

void Scale::pan(double fraction) {
  const double a = forward(lo), b = forward(hi), d = (b - a) * fraction;
  lo = inverse(a + d);
  hi = inverse(b + d);
}

Scale Scale::fit(double min, double max, bool log, double pad) {
  Scale s;
  s.log = log;
  if (log) {
    min = std::max(min, 1e-300);
    max = std::max(max, min);
  }
  double a = s.forward(min), b = s.forward(max);
  if (!std::isfinite(a) || !std::isfinite(b)) a = 0, b = 1;
  if (b - a < 1e-12) {  // one value: a span around it
    const double half = log ? 0.5 : std::max(std::fabs(a) * 0.5, 0.5);
    a -= half, b += half;
  }
  const double margin = (b - a) * pad;
  s.lo = s.inverse(a - margin);
  s.hi = s.inverse(b + margin);
  return s;
}

namespace {

double nice_step(double span, int target) {
  const double raw = span / std::max(target, 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

}  // namespace

std::vector<Tick> ticks(const Scale& s, int target) {
  std::vector<Tick> out;
  const double lo = std::min(s.lo, s.hi), hi = std::max(s.lo, s.hi);
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return out;
  if (!s.log) {
    const double step = nice_step(hi - lo, target);
    for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9 && out.size() < 200;
         v += step) {
      const double clean = std::fabs(v) < step * 1e-9 ? 0 : v;
      out.push_back({clean, true, format_tick(clean)});
    }
    return out;
  }
  const int first = static_cast<int>(std::floor(std::log10(lo)));
  const int last = static_cast<int>(std::ceil(std::log10(hi)));
  const int decades = last - first;
  const int every = std::max(1, decades / std::max(target, 1));  // label every n-th decade
  for (int e = first; e <= last && out.size() < 400; ++e) {
    const double base = std::pow(10.0, e);
    for (int m = 1; m <= 9; ++m) {
      const double v = base * m;
      if (v < lo || v > hi) continue;
      const bool major = m == 1 ? (e % every == 0) : (decades <= 2 && (m == 2 || m == 5));
      out.push_back({v, major, major ? format_tick(v) : ""});
    }
  }
  return out;
}

}  // namespace kwb::gui::plot
