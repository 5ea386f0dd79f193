// Empties the L2 cache before a cold sample, outside the measured interval.
//
// A memset of twice the L2 size evicts every line the previous sample left. It leaves the L2
// full of dirty lines, as the previous kernel of a real program does: the measured kernel pays
// for writing them back, while its own last writes stay in L2 when it ends; the two roughly
// cancel, so cold times match the steady-state DRAM rate. A flush that left the L2 clean (write
// then read) gave kernels a free L2-sized write buffer instead: on an H200 an RMSNorm read
// 4230 GB/s, 107% of the measured copy ceiling (docs/performance.md). The memset runs on the
// measurement stream before the sample's external id is pushed, so no timer counts it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace kwb {

class L2Flusher {
 public:
  explicit L2Flusher(std::size_t l2_bytes);  // allocates 2 x l2_bytes (at least 64 MiB)
  ~L2Flusher();
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;

  void flush(cudaStream_t stream);
  std::size_t bytes() const { return bytes_; }

 private:
  void* buffer_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace kwb
