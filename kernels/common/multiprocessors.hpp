// The current device's multiprocessor count, which launches size their grids by (a persistent
// grid, a number of blocks a multiprocessor), and its L2 size (l2_hint.hpp's rule). Host-only.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>

namespace kwb {

inline int multiprocessor_count() {
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  return sms;
}

// Asked of the driver once per device (a launch asks each time).
inline double l2_cache_bytes() {
  constexpr int kDevices = 64;
  static std::atomic<int> cached[kDevices] = {};
  int device = 0, bytes = 0;
  cudaGetDevice(&device);
  const bool cachable = device >= 0 && device < kDevices;
  if (cachable) bytes = cached[device].load(std::memory_order_relaxed);
  if (bytes == 0) {
    cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device);
    if (cachable) cached[device].store(bytes, std::memory_order_relaxed);
  }
  return bytes;
}

}  // namespace kwb
