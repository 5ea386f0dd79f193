// Empties the L2 cache before a cold sample, outside the measured interval, in one of two ways
// (harness/catalogue/flush_kind.hpp says when each is the right one).
//
// dirty: a memset of twice the L2 size evicts every line the previous sample left and leaves the
//   L2 full of dirty lines, as the previous kernel of a real program does: the measured kernel
//   pays for writing them back, while its own last writes stay in L2 when it ends.
// clean: the same memset, then a read sweep over a second buffer of twice the L2 size that is
//   never written after it was filled: the sweep evicts (and so writes back) every dirty line
//   and leaves the L2 holding only clean lines of that buffer, which the kernel evicts for free.
//   This is the state Nsight Compute's `--cache-control all` gives (flush and invalidate).
// Both run on the measurement stream before the sample's external id is pushed, so no timer
// counts them. A clean flush leaves a kernel an L2-sized free write buffer: on an H200 an RMSNorm
// read 107% of the dirty-flush copy ceiling that way, which is why the copy ceiling is measured
// under both flushes and the best is kept (docs/notebook/2026-11-21-h200-first-harness.md).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "harness/catalogue/flush_kind.hpp"

namespace kwb {

class L2Flusher {
 public:
  // Allocates 2 x l2_bytes (at least 64 MiB); a clean flusher twice that.
  explicit L2Flusher(std::size_t l2_bytes, FlushKind kind = FlushKind::dirty);
  ~L2Flusher();
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;

  void flush(cudaStream_t stream);
  std::size_t bytes() const { return bytes_; }
  FlushKind kind() const { return kind_; }

 private:
  // The clean flush's read sweep: evicts (and so writes back) the dirty lines, leaves the L2
  // holding clean lines.
  void sweep(cudaStream_t stream);
  FlushKind kind_;
  void* buffer_ = nullptr;
  void* clean_buffer_ = nullptr;  // read by the clean sweep, written once at construction
  unsigned* sink_ = nullptr;      // keeps the read sweep from being optimised away
  std::size_t bytes_ = 0;
};

}  // namespace kwb
