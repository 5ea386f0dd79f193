// Hardware counters of one case: what the kernels of one sample really did (bytes moved at each
// level, instructions by pipe, tensor operations, occupancy), read by the CUPTI range profiler in
// replay passes of their own after timing (harness/worker/counters/), or imported from Nsight
// Compute (`kwb profile --run`). Times never come from here: the counter passes serialise and
// replay the kernels, so only the timing pass times them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kwb {

// Metrics more than one stage reads by name: the duration (every request collects it; it weighs
// the per-kernel averages) and the DRAM bytes the measured roofline is made of.
inline constexpr const char* kDurationMetric = "gpu__time_duration.sum";
inline constexpr const char* kDramBytesReadMetric = "dram__bytes_read.sum";
inline constexpr const char* kDramBytesWriteMetric = "dram__bytes_write.sum";

// How a kernel was launched, from its CUPTI activity record (the same for every pass).
struct KernelLaunch {
  std::int64_t grid[3] = {0, 0, 0};
  std::int64_t block[3] = {0, 0, 0};
  std::int64_t registers_per_thread = 0;
  std::int64_t static_shared_bytes = 0;   // per block
  std::int64_t dynamic_shared_bytes = 0;  // per block
  // From the limits of the GPU it ran on: blocks of this shape one SM holds at once, and the
  // grid in waves of (SMs x that); 0 where not known (imported figures).
  std::int64_t blocks_per_sm = 0;
  double theoretical_occupancy = 0;  // resident warps over the SM's maximum, 0..1
  double waves = 0;
  std::int64_t blocks() const { return grid[0] * grid[1] * grid[2]; }
  std::int64_t threads_per_block() const { return block[0] * block[1] * block[2]; }
};

// One kernel of the sample, in launch order: metric name -> value.
struct KernelCounters {
  std::string name;
  std::map<std::string, double> values;
  std::optional<KernelLaunch> launch;
};

struct CaseCounters {
  std::string source;                 // "cupti" (kwb's own) or "ncu" (imported)
  std::string chip;                   // "GH100"
  std::vector<std::string> sets;      // the sets asked for ("memory", "tensor"), may be empty
  std::vector<std::string> metrics;   // every metric collected, full names, in request order
  int passes = 0;                     // replay passes the case cost
  std::string note;                   // how they were taken ("L2 flushed before each pass", ...)
  std::string unavailable;            // why none were read (no permission, ...); empty: they were
  std::vector<KernelCounters> kernels;
  // Over the sample's kernels: counts (.sum) add up, .max and .min take the extreme, and every
  // other form (averages, ratios, rates, percentages) is weighted by each kernel's duration.
  std::map<std::string, double> total;
};

// The total over a sample's kernels of each metric (the rule above; the duration weights come
// from gpu__time_duration.sum where collected, else the kernels weigh the same).
std::map<std::string, double> total_over_kernels(const std::vector<KernelCounters>& kernels);

}  // namespace kwb
