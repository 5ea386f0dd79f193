// What the oracles' GPU paths share (reference/matmul_fp64_gpu.cu, reference/attention_fp64_gpu.cu):
// whether this thread may use its oracle device, a once-per-process note for an unexpected CUDA
// error (the CPU then computes the same answer, only slower), and the scratch buffers and stream
// of one call, released on every path.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <vector>

#include "harness/catalogue/oracle_device.hpp"

namespace kwb::ref {

// No device, no driver, no memory: what a GPU path meets now and then; the CPU takes over
// without a word.
inline bool expected_oracle_gpu_error(cudaError_t e) {
  return e == cudaErrorMemoryAllocation || e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver;
}

// Anything else is said once per process: the results stay right (the CPU computes them), only
// slower, and the reader learns why. `source` names the GPU path's file.
inline void note_unexpected(const char* source, cudaError_t e, const char* step) {
  if (expected_oracle_gpu_error(e)) return;
  static std::once_flag once;
  std::call_once(once, [&] {
    std::fprintf(stderr,
                 "kwb: the GPU fp64 reference (%s) failed at '%s': %s (%s); that oracle step runs on the CPU "
                 "instead, with the same results, only slower. KWB_ORACLE_GPU=0 keeps the oracles there "
                 "without trying.\n",
                 source, step, cudaGetErrorName(e), cudaGetErrorString(e));
  });
}

// Whether this thread named a device for the oracles (harness/catalogue/oracle_device.hpp) and
// that device is its current one. CUDA is asked only once a device is named: a thread or process
// that never named one never initialises CUDA here.
inline bool on_oracle_device() {
  const int device = oracle_gpu_device();
  if (device < 0) return false;
  int current = -1;
  if (const cudaError_t e = cudaGetDevice(&current); e != cudaSuccess) {
    note_unexpected("reference/oracle_gpu_support.hpp", e, "cudaGetDevice");
    cudaGetLastError();
    return false;
  }
  if (current == device) return true;
  static std::once_flag once;
  std::call_once(once, [&] {
    std::fprintf(stderr,
                 "kwb: a thread named CUDA device %d for the oracles' fp64 work but its current device is %d; "
                 "the oracles run on the CPU (call cudaSetDevice(%d) on that thread first)\n",
                 device, current, device);
  });
  return false;
}

// The device buffers and stream of one call, released on every path.
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    for (void* p : buffers_) cudaFree(p);
    if (stream_) cudaStreamDestroy(stream_);
  }
  template <class T>
  cudaError_t allocate(T** out, std::size_t elements) {
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, std::max<std::size_t>(elements, 1) * sizeof(T));
    if (e == cudaSuccess) buffers_.push_back(p);
    *out = static_cast<T*>(p);
    return e;
  }
  cudaError_t create_stream() { return cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking); }
  cudaStream_t stream() const { return stream_; }

 private:
  std::vector<void*> buffers_;
  cudaStream_t stream_ = nullptr;
};

}  // namespace kwb::ref
