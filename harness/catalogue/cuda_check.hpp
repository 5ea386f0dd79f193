// CUDA errors as exceptions that say which step failed, and whether the context survived.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace kwb {

struct CudaError : std::runtime_error {
  CudaError(cudaError_t code, const std::string& step)
      : std::runtime_error(step + ": " + cudaGetErrorName(code) + ": " + cudaGetErrorString(code)),
        code(code) {}
  cudaError_t code;
};

inline void cuda_check(cudaError_t code, const char* step) {
  if (code != cudaSuccess) throw CudaError(code, step);
}

// Launch errors surface at the launch (configuration) or at the next synchronization (faults).
inline void cuda_check_launch(const char* step) {
  cuda_check(cudaGetLastError(), step);
}

}  // namespace kwb
