// The current device's multiprocessor count, which launches size their grids by (a persistent
// grid, a number of blocks a multiprocessor), and its L2 size (l2_hint.hpp's rule). Host-only.
#pragma once

#include <cuda_runtime_api.h>

namespace kwb {

inline int multiprocessor_count() {
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  return sms;
}

inline double l2_cache_bytes() {
  int device = 0, bytes = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device);
  return bytes;
}

}  // namespace kwb
