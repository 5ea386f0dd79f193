// The ceilings' micro-benchmarks, run in the worker on the current device. The ceilings they
// give are read through harness/derive/ceilings.hpp (roofs, the datasheet fallback, the cache).
#pragma once

#include "harness/record/record.hpp"
#include "harness/worker/measure/measure.hpp"

namespace kwb {

// Runs the micro-benchmarks on the current device (in the worker): DRAM copies (cudaMemcpyAsync
// and copy kernels at several launch shapes) and read-only streams over 1 and 2 GiB under both
// flushes (the best kept, with its method), a hot L2 copy, an FFMA-bound kernel, cuBLASLt GEMMs
// (bf16, fp16, tf32) of 8192^3.
Ceilings measure_ceilings(const DeviceInfo& device, TimerKind timer);

}  // namespace kwb
