// Empties the L2 cache before a cold sample, outside the measured interval.
//
// Writing a buffer of twice the L2 size evicts everything the previous sample left, but leaves
// the L2 full of dirty lines that the measured kernel would have to write back; a read pass over
// the same buffer afterwards turns them into clean lines, so the kernel starts on a cold and
// clean cache. Both kernels run on the measurement stream before the sample's external id is
// pushed, so no timer counts them.
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
  unsigned* sink_ = nullptr;  // keeps the read pass from being optimised away
  std::size_t bytes_ = 0;
  int blocks_ = 0;
};

}  // namespace kwb
