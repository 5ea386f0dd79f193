// A grid-stride comparison of two tensors' bits: elements are compared as unsigned words of their
// size, so NaNs compare by their payload and -0 differs from +0 (bit-identical means that).
#include "harness/worker/verify/device_compare.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/host_tensor.hpp"

namespace kwb {
namespace {

// counts: [0] differing, [1] unwritten, [2] first differing index (ULLONG_MAX: none).
template <class W>
__global__ void compare_kernel(const W* got, const W* expected, std::int64_t count, W poison,
                               unsigned long long* counts) {
  unsigned long long differing = 0, unwritten = 0, first = ULLONG_MAX;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const W g = got[i];
    if (g != expected[i]) {
      ++differing;
      unwritten += g == poison;
      if (first == ULLONG_MAX) first = static_cast<unsigned long long>(i);  // the thread's first is its lowest
    }
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    differing += __shfl_down_sync(0xffffffffu, differing, offset);
    unwritten += __shfl_down_sync(0xffffffffu, unwritten, offset);
    first = min(first, __shfl_down_sync(0xffffffffu, first, offset));
  }
  if ((threadIdx.x & 31) == 0 && differing) {
    atomicAdd(&counts[0], differing);
    atomicAdd(&counts[1], unwritten);
    atomicMin(&counts[2], first);
  }
}

template <class W>
W repeated(unsigned char byte) {
  W w = 0;
  for (std::size_t i = 0; i < sizeof(W); ++i) w = static_cast<W>((w << 8) | byte);
  return w;
}

template <class W>
void launch_compare(const void* got, const void* expected, std::int64_t count, unsigned char poison,
                    unsigned long long* counts, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>(std::min<std::int64_t>((count + 255) / 256, 4096));
  compare_kernel<W><<<blocks, 256, 0, stream>>>(static_cast<const W*>(got), static_cast<const W*>(expected), count,
                                                repeated<W>(poison), counts);
}

}  // namespace

CompareCounts compare_bits(const void* got, const void* expected, std::int64_t count, ElemType type,
                           cudaStream_t stream) {
  CompareCounts out;
  if (count == 0) return out;
  unsigned long long* counts = nullptr;
  cuda_check(cudaMalloc(&counts, 3 * sizeof(unsigned long long)), "allocate compare counters");
  unsigned long long host[3] = {0, 0, ULLONG_MAX};
  cudaError_t status = cudaMemcpyAsync(counts, host, sizeof host, cudaMemcpyHostToDevice, stream);
  if (status == cudaSuccess) {
    const unsigned char poison = poison_byte(type);
    switch (elem_size(type)) {
      case 1: launch_compare<std::uint8_t>(got, expected, count, poison, counts, stream); break;
      case 2: launch_compare<std::uint16_t>(got, expected, count, poison, counts, stream); break;
      case 4: launch_compare<std::uint32_t>(got, expected, count, poison, counts, stream); break;
      default: launch_compare<unsigned long long>(got, expected, count, poison, counts, stream); break;
    }
    status = cudaGetLastError();
  }
  if (status == cudaSuccess) status = cudaMemcpyAsync(host, counts, sizeof host, cudaMemcpyDeviceToHost, stream);
  if (status == cudaSuccess) status = cudaStreamSynchronize(stream);
  cudaFree(counts);
  cuda_check(status, "compare timed outputs with the verified outputs");
  out.differing = static_cast<std::int64_t>(host[0]);
  out.unwritten = static_cast<std::int64_t>(host[1]);
  out.first_differing = host[2] == ULLONG_MAX ? -1 : static_cast<std::int64_t>(host[2]);
  return out;
}

}  // namespace kwb
