// Sample-time histogram (see sample_histogram.hpp).
#include "gui/model/sample_histogram.hpp"

#include <algorithm>

namespace kwb::gui {

SampleHistogram sample_histogram(const std::vector<double>& samples_us, int bins) {
  SampleHistogram h;
  if (samples_us.empty() || bins <= 0) return h;
  const auto [lo_it, hi_it] = std::minmax_element(samples_us.begin(), samples_us.end());
  h.lo = *lo_it;
  h.hi = std::max(*hi_it, *lo_it * 1.0001 + 1e-9);  // all equal: a narrow span, one bin filled
  h.counts.assign(bins, 0);
  for (double s : samples_us)
    ++h.counts[std::min(bins - 1, static_cast<int>((s - h.lo) / (h.hi - h.lo) * bins))];
  h.peak = *std::max_element(h.counts.begin(), h.counts.end());
  return h;
}

}  // namespace kwb::gui
