// Write-then-read L2 flush (see l2_flush.hpp for why both passes).
#include "harness/l2_flush.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace kwb {
namespace {

__global__ void read_all(const uint4* __restrict__ data, std::size_t count, unsigned* sink) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const uint4 v = data[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) *sink = acc;  // practically never true; the loads must still happen
}

}  // namespace

L2Flusher::L2Flusher(std::size_t l2_bytes) {
  bytes_ = std::max<std::size_t>(2 * l2_bytes, std::size_t{64} << 20);
  bytes_ = (bytes_ + 15) / 16 * 16;
  if (cudaMalloc(&buffer_, bytes_) != cudaSuccess || cudaMalloc(&sink_, sizeof(unsigned)) != cudaSuccess)
    throw std::runtime_error("cannot allocate the " + std::to_string(bytes_ >> 20) +
                             " MiB L2 flush buffer");
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  blocks_ = std::max(1, sms) * 4;
}

L2Flusher::~L2Flusher() {
  cudaFree(buffer_);
  cudaFree(sink_);
}

void L2Flusher::flush(cudaStream_t stream) {
  cudaMemsetAsync(buffer_, 0x5A, bytes_, stream);
  read_all<<<blocks_, 512, 0, stream>>>(static_cast<const uint4*>(buffer_), bytes_ / 16, sink_);
}

}  // namespace kwb
