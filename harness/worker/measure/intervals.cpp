// Sum, busy time and span of the kernels recorded for one sample.
//
// Timestamps are absolute nanoseconds (around 1e18), beyond the 2^53 a double holds exactly, so
// all arithmetic stays in integers and only the resulting durations become doubles.
#include "harness/worker/measure/intervals.hpp"

#include <algorithm>
#include <vector>

namespace kwb {

SampleTimes sample_times(std::span<const KernelInterval> kernels) {
  SampleTimes times;
  if (kernels.empty()) return times;

  std::vector<KernelInterval> by_start(kernels.begin(), kernels.end());
  std::sort(by_start.begin(), by_start.end(),
            [](const KernelInterval& a, const KernelInterval& b) { return a.start_ns < b.start_ns; });

  std::uint64_t sum = 0;
  std::uint64_t busy = 0;
  std::uint64_t last_end = by_start.front().end_ns;
  std::uint64_t merged_start = by_start.front().start_ns;
  std::uint64_t merged_end = by_start.front().end_ns;
  for (const KernelInterval& k : by_start) {
    sum += k.end_ns - k.start_ns;
    last_end = std::max(last_end, k.end_ns);
    if (k.start_ns <= merged_end) {
      merged_end = std::max(merged_end, k.end_ns);  // overlaps or touches the current run
    } else {
      busy += merged_end - merged_start;
      merged_start = k.start_ns;
      merged_end = k.end_ns;
    }
  }
  busy += merged_end - merged_start;

  times.kernel_count = static_cast<std::int64_t>(by_start.size());
  times.sum_ns = static_cast<double>(sum);
  times.busy_ns = static_cast<double>(busy);
  times.span_ns = static_cast<double>(last_end - by_start.front().start_ns);
  return times;
}

}  // namespace kwb
