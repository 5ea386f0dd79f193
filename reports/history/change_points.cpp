#include "reports/history/change_points.hpp"

#include <algorithm>
#include <cmath>

namespace kwb::history {

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

std::vector<TrendStep> find_change_points(std::span<const double> medians, const ChangeRule& rule) {
  // 1.4826 * MAD estimates the standard deviation of normal data.
  constexpr double kMadToSigma = 1.4826;
  std::vector<TrendStep> steps(medians.size());
  std::size_t segment_start = 0;  // the first run since the last change point
  for (std::size_t i = 0; i < medians.size(); ++i) {
    TrendStep& s = steps[i];
    if (i > 0 && medians[i - 1] > 0) s.change_vs_previous = medians[i] / medians[i - 1] - 1;
    const std::size_t available = i - segment_start;
    if (available < std::max<std::size_t>(rule.min_history, 1)) continue;
    const std::size_t from = i - std::min(available, std::max<std::size_t>(rule.window, 1));
    std::vector<double> window(medians.begin() + static_cast<std::ptrdiff_t>(from),
                               medians.begin() + static_cast<std::ptrdiff_t>(i));
    const double reference = median_of(window);
    if (!(reference > 0)) continue;
    std::vector<double> deviations;
    for (double x : window) deviations.push_back(std::abs(x - reference));
    const double noise = kMadToSigma * median_of(deviations) / reference;
    s.judged = true;
    s.reference = reference;
    s.threshold = std::max(rule.min_relative, rule.noise_factor * noise);
    s.change = std::abs(medians[i] / reference - 1) > s.threshold;
    if (s.change) segment_start = i;
  }
  return steps;
}

}  // namespace kwb::history
