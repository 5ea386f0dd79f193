// The ceilings' micro-benchmarks, run in the worker on the current device. The ceilings they
// give are read through harness/derive/ceilings.hpp (roofs, the datasheet fallback, the cache).
#pragma once

#include <string>

#include "harness/record/record.hpp"
#include "harness/worker/measure/measure.hpp"

namespace kwb {

// Runs the micro-benchmarks on the current device (in the worker): DRAM copies (cudaMemcpyAsync
// and copy kernels at several launch shapes) and read-only streams (read kernels at several
// launch shapes, loads in flight and vector widths) over 1 and 2 GiB under both flushes (the
// best of each kept, with its method), a hot L2 copy, an FFMA-bound kernel, cuBLASLt GEMMs
// (bf16, fp16, tf32).
Ceilings measure_ceilings(const DeviceInfo& device, TimerKind timer);

// A short copy (every copy method once at 1 GiB, dirty flush, the quick preset: about a second)
// that a session runs against a cached copy ceiling: if the GPU now copies faster than the cache
// says, the cached ceilings are stale and cases would be judged against roofs set too low.
struct CopyCheck {
  double copy_gbps = 0;  // the best method's read + write GB/s
  std::string method;    // which one ("copy_blocks<1,1> 1024MiB dirty")
};
CopyCheck check_copy_ceiling(const DeviceInfo& device, TimerKind timer);

}  // namespace kwb
