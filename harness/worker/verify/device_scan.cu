// A grid-stride reduction that counts non-finite and poisoned elements of one tensor.
#include "harness/worker/verify/device_scan.hpp"

#include <cstring>
#include <type_traits>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/device_types.cuh"
#include "harness/catalogue/host_tensor.hpp"

namespace kwb {
namespace {

template <class T>
__device__ __forceinline__ bool equals_pattern(const T& v, unsigned char byte) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(&v);
#pragma unroll
  for (int i = 0; i < static_cast<int>(sizeof(T)); ++i)
    if (p[i] != byte) return false;
  return true;
}

template <class T>
__global__ void scan_kernel(const T* data, std::int64_t count, unsigned char poison,
                            unsigned long long* counts) {
  unsigned long long nonfinite = 0, unwritten = 0, minus_inf = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const T v = data[i];
    if (equals_pattern(v, poison)) {
      ++unwritten;
    } else if constexpr (!std::is_integral_v<T>) {
      const float x = to_float<T>(v);
      if (!isfinite(x)) ++nonfinite;
      if (x == -INFINITY) ++minus_inf;
    }
  }
  // Warp sums, then one atomic per warp.
  for (int offset = 16; offset > 0; offset >>= 1) {
    nonfinite += __shfl_down_sync(0xffffffffu, nonfinite, offset);
    unwritten += __shfl_down_sync(0xffffffffu, unwritten, offset);
    minus_inf += __shfl_down_sync(0xffffffffu, minus_inf, offset);
  }
  if ((threadIdx.x & 31) == 0 && (nonfinite | unwritten)) {
    atomicAdd(&counts[0], nonfinite);
    atomicAdd(&counts[1], unwritten);
    atomicAdd(&counts[2], minus_inf);
  }
}

}  // namespace

ScanCounts scan_output(const void* ptr, std::int64_t count, ElemType type, cudaStream_t stream) {
  ScanCounts out;
  if (count == 0) return out;
  unsigned long long* counts = nullptr;
  unsigned long long host[3] = {0, 0, 0};
  cuda_check(cudaMalloc(&counts, sizeof host), "allocate scan counters");
  cudaError_t status = cudaMemsetAsync(counts, 0, sizeof host, stream);
  if (status == cudaSuccess) {
    const unsigned blocks = static_cast<unsigned>(std::min<std::int64_t>((count + 255) / 256, 4096));
    dispatch_elem(type, [&](auto tag) {
      using T = decltype(tag);
      scan_kernel<T><<<blocks, 256, 0, stream>>>(static_cast<const T*>(ptr), count, poison_byte(type), counts);
    });
    status = cudaGetLastError();
  }
  if (status == cudaSuccess)
    status = cudaMemcpyAsync(host, counts, sizeof host, cudaMemcpyDeviceToHost, stream);
  if (status == cudaSuccess) status = cudaStreamSynchronize(stream);
  cudaFree(counts);
  cuda_check(status, "scan outputs for NaN/Inf and poison");
  out.nonfinite = static_cast<std::int64_t>(host[0]);
  out.unwritten = static_cast<std::int64_t>(host[1]);
  out.minus_inf = static_cast<std::int64_t>(host[2]);
  return out;
}

}  // namespace kwb
