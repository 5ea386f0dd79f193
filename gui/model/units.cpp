// Number formatting for every window (see units.hpp).
#include "gui/model/units.hpp"

#include <fmt/format.h>

#include <cmath>

namespace kwb::gui {

namespace {
bool missing(double v) { return !std::isfinite(v); }
}  // namespace

std::string format_time_us(double us) {
  if (missing(us)) return "-";
  if (us >= 1000) return fmt::format("{:.3g} ms", us / 1000);
  return fmt::format("{:.3g} us", us);
}

std::string format_gbps(double gbps) {
  return missing(gbps) ? "-" : fmt::format("{:.0f} GB/s", gbps);
}
std::string format_tflops(double tflops) {
  return missing(tflops) ? "-" : fmt::format("{:.3g} TFLOP/s", tflops);
}
std::string format_percent(double pct) { return missing(pct) ? "-" : fmt::format("{:.1f}%", pct); }
std::string format_ratio(double ratio) {
  return missing(ratio) ? "-" : fmt::format("{:.2f}x", ratio);
}

std::string format_bytes(std::int64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024 && unit < 4) v /= 1024, ++unit;
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.3g} {}", v, kUnits[unit]);
}

std::string format_count(double count) {
  if (missing(count)) return "-";
  static const char* kPrefixes[] = {"", " k", " M", " G", " T", " P"};
  double v = count;
  int prefix = 0;
  while (std::fabs(v) >= 1000 && prefix < 5) v /= 1000, ++prefix;
  return prefix == 0 ? fmt::format("{:.4g}", v) : fmt::format("{:.3g}{}", v, kPrefixes[prefix]);
}

std::string format_tick(double value) {
  if (missing(value)) return "-";
  const double a = std::fabs(value);
  if (a != 0 && (a >= 1e5 || a < 1e-3)) return fmt::format("{:.0e}", value);
  return fmt::format("{:.6g}", value);  // ticks are round numbers: 10000, not 1e+04
}

}  // namespace kwb::gui
