// The current device's multiprocessor count, which launches size their grids by (a persistent
// grid, a number of blocks a multiprocessor). Host-only.
#pragma once

#include <cuda_runtime_api.h>

namespace kwb {

inline int multiprocessor_count() {
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  return sms;
}

}  // namespace kwb
