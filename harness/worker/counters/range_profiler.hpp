// Hardware counters of the kernels one launch of a variant runs, with the CUPTI Range Profiler:
// a range per kernel (auto range), the launch replayed by us once per pass (user replay), so
// that every pass starts from the state the timing pass's samples start from (the variant's
// reset, the L2 flush of cold mode) and only the kernels between start and stop are counted.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/plan/metric_host.hpp"

namespace kwb {

// Whether this process can read counters on its current device, and the chip they are named by.
struct CounterAccess {
  std::string chip;                        // "GH100"; empty if CUPTI could not say
  std::vector<std::uint8_t> availability;  // the device's counter-availability image
  std::string unavailable;                 // why counters cannot be read (with the fix); empty: they can
};

// Initialises the profiler for the current device once per process and reads its availability.
// Never throws: a refusal (no permission, an unsupported GPU, another profiler attached) is
// returned in `unavailable`, worded with the setting that would allow counters.
const CounterAccess& counter_access(int device);

// CUPTI's chip name for device `index` ("GH100"), or empty.
std::string chip_name(int index);

// One replay pass: `before` runs outside the profiled range (the reset, the flush), `launch`
// inside it; both on `stream`.
struct ReplayPass {
  std::function<void(cudaStream_t)> before;
  std::function<void(cudaStream_t)> launch;
};

struct RangeValues {
  std::string range;           // the range's name: the kernel's launch index in the pass ("0", "1", ...)
  std::vector<double> values;  // one per config.metrics()
};

struct RangeResult {
  std::vector<RangeValues> ranges;  // in launch order
  int passes = 0;                   // passes it took
};

// per_kernel: a range per kernel the launch runs (CUPTI's auto range); whole_launch: one range
// around the launch (a user range), which the SASS-instruction metrics need.
enum class RangeKind { per_kernel, whole_launch };

// Collects `config`'s metrics over the kernels `pass.launch` runs, replaying the pass until
// CUPTI has every counter. Throws CounterError when CUPTI refuses (and says which call), or the
// launch ran more kernels than `max_kernels`.
RangeResult profile_ranges(const MetricConfig& config, const ReplayPass& pass, cudaStream_t stream,
                           RangeKind kind = RangeKind::per_kernel, int max_kernels = 256);

}  // namespace kwb
