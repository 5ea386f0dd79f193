// Totals of a sample's counters (see counters.hpp).
#include "harness/record/counters.hpp"

#include <algorithm>

namespace kwb {

std::map<std::string, double> total_over_kernels(const std::vector<KernelCounters>& kernels) {
  std::map<std::string, double> total, weight;
  std::map<std::string, bool> seen;
  for (const KernelCounters& k : kernels) {
    const auto d = k.values.find(kDurationMetric);
    const double w = d != k.values.end() && d->second > 0 ? d->second : 1.0;
    for (const auto& [metric, value] : k.values) {
      const bool first = !seen[metric];
      seen[metric] = true;
      if (metric.ends_with(".sum")) {
        total[metric] += value;
      } else if (metric.ends_with(".max")) {
        total[metric] = first ? value : std::max(total[metric], value);
      } else if (metric.ends_with(".min")) {
        total[metric] = first ? value : std::min(total[metric], value);
      } else {  // an average, ratio, rate or percentage: weighted by duration
        total[metric] += w * value;
        weight[metric] += w;
      }
    }
  }
  for (auto& [metric, w] : weight)
    if (w > 0) total[metric] /= w;
  return total;
}

}  // namespace kwb
