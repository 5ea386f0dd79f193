// L2 flush by a memset of twice the L2 size (see l2_flush.hpp for why a plain write).
#include "measure/l2_flush.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace kwb {

L2Flusher::L2Flusher(std::size_t l2_bytes) {
  bytes_ = std::max<std::size_t>(2 * l2_bytes, std::size_t{64} << 20);
  if (cudaMalloc(&buffer_, bytes_) != cudaSuccess)
    throw std::runtime_error("cannot allocate the " + std::to_string(bytes_ >> 20) +
                             " MiB L2 flush buffer");
}

L2Flusher::~L2Flusher() { cudaFree(buffer_); }

void L2Flusher::flush(cudaStream_t stream) {
  // A different byte each time, so no layer can skip writing what is already there.
  static unsigned char pattern = 0;
  cudaMemsetAsync(buffer_, ++pattern, bytes_, stream);
}

}  // namespace kwb
