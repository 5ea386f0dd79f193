// L2 flush: a memset of twice the L2 size, and for a clean flush a read sweep after it (see
// l2_flush.hpp for why each).
#include "harness/worker/measure/l2_flush.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "harness/worker/measure/stream_kernels.cuh"

namespace kwb {
namespace {

void* allocate(std::size_t bytes, const char* what) {
  void* p = nullptr;
  if (cudaMalloc(&p, bytes) != cudaSuccess)
    throw std::runtime_error("cannot allocate the " + std::to_string(bytes >> 20) + " MiB " + what);
  return p;
}

}  // namespace

L2Flusher::L2Flusher(std::size_t l2_bytes, FlushKind kind) : kind_(kind) {
  bytes_ = std::max<std::size_t>(2 * l2_bytes, std::size_t{64} << 20);
  buffer_ = allocate(bytes_, "L2 flush buffer");
  if (kind_ == FlushKind::clean) {
    try {
      clean_buffer_ = allocate(bytes_, "clean L2 flush buffer");
      sink_ = static_cast<unsigned*>(allocate(sizeof(unsigned), "flush sink"));
    } catch (...) {  // the destructor does not run for a constructor that throws
      cudaFree(buffer_);
      cudaFree(clean_buffer_);
      throw;
    }
    // Filled once (never zeros by accident of a fresh allocation), then only ever read.
    cudaMemset(clean_buffer_, 0x5A, bytes_);
    cudaDeviceSynchronize();
  }
}

L2Flusher::~L2Flusher() {
  cudaFree(buffer_);
  cudaFree(clean_buffer_);
  cudaFree(sink_);
}

void L2Flusher::flush(cudaStream_t stream) {
  // A different byte each time, so no layer can skip writing what is already there.
  static unsigned char pattern = 0;
  cudaMemsetAsync(buffer_, ++pattern, bytes_, stream);
  if (kind_ == FlushKind::clean) sweep(stream);
}

void L2Flusher::sweep(cudaStream_t stream) {
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  read_stream<<<std::max(sms, 1) * 4, 512, 0, stream>>>(static_cast<const uint4*>(clean_buffer_), bytes_ / 16,
                                                       sink_);
}

}  // namespace kwb
