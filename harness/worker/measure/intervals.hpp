// Per-sample times from the kernel records of one sample.
//
// A sample of a fused variant is one kernel; a baseline composed op by op launches several.
// Three times describe it: the sum of kernel durations (work the GPU did), the busy time (the
// union of kernel intervals: overlapping kernels count once) and the span (first start to last
// end: busy time plus the launch gaps between kernels, which an unfused baseline really pays).
#pragma once

#include <cstdint>
#include <span>

namespace kwb {

struct KernelInterval {
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;  // end >= start for a valid record
};

struct SampleTimes {
  std::int64_t kernel_count = 0;
  double sum_ns = 0;
  double busy_ns = 0;
  double span_ns = 0;
};

// Intervals in any order. Records with end < start or start == 0 are incomplete and must have
// been dropped by the caller. An empty input gives all zeros.
SampleTimes sample_times(std::span<const KernelInterval> kernels);

}  // namespace kwb
