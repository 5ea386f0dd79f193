// The bit-for-bit comparison of an output with a device copy of its verified value, over the whole
// tensor, on the device: what re-checks a deterministic variant's timed launches (every element,
// however large the output, in about the time it takes to read it twice).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "harness/catalogue/elem_type.hpp"

namespace kwb {

struct CompareCounts {
  std::int64_t differing = 0;         // elements whose bits differ from the copy
  std::int64_t unwritten = 0;         // of those, elements still holding the poison pattern
  std::int64_t first_differing = -1;  // index of the first one; -1 when none differs
};

// Compares `count` elements of `type` at `got` with those at `expected` (both on the device) on
// `stream` and waits for the counts. Throws CudaError on a CUDA failure.
CompareCounts compare_bits(const void* got, const void* expected, std::int64_t count, ElemType type,
                           cudaStream_t stream);

}  // namespace kwb
