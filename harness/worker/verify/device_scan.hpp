// The full scan of an output on the device: however few elements the verifier samples, every
// element of every output is checked for NaN/Inf and for untouched poison, so a kernel that
// writes one NaN in a row the sample missed still fails.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "harness/catalogue/elem_type.hpp"

namespace kwb {

struct ScanCounts {
  std::int64_t nonfinite = 0;  // NaN or Inf, poison excluded (floating types only)
  std::int64_t unwritten = 0;  // elements equal to the poison pattern of the type
  std::int64_t minus_inf = 0;  // of the non-finite, -Inf
};

// Scans `count` elements of `type` at `device_ptr` on `stream` and waits for the counts.
// Throws CudaError on a CUDA failure.
ScanCounts scan_output(const void* device_ptr, std::int64_t count, ElemType type, cudaStream_t stream);

}  // namespace kwb
