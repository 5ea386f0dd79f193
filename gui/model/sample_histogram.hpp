// The case detail's histogram of a case's sample times, as data: equal-width bins from the
// fastest to the slowest sample, with the summary's median, p10 and p90 to mark on it.
#pragma once

#include <vector>

#include "harness/record/stats.hpp"

namespace kwb::gui {

struct SampleHistogram {
  double lo = 0, hi = 0;    // the first bin's left edge and the last one's right edge, us
  std::vector<int> counts;  // samples per bin; empty when there are no samples
  int peak = 0;             // the largest count
  double bin_width() const { return counts.empty() ? 0 : (hi - lo) / counts.size(); }
};

// Every sample lands in one bin (the slowest in the last); all-equal samples get a narrow span.
SampleHistogram sample_histogram(const std::vector<double>& samples_us, int bins = 40);

}  // namespace kwb::gui
