// Deterministic column sums of per-block partials, many threads per column: the second stage of
// a weight gradient summed over all rows. Each block of stage 1 leaves one row of fp32 partial
// sums; this sums the `parts` rows of every column in a fixed order (16 strided lanes, then the
// lanes in index order), so two runs give the same bits, with no atomics.
//
// eager_ops.cuh's sum_partials gives each column one thread, which is what a framework's small
// reduction does but leaves a few thousand threads looping over hundreds of partials (latency-
// bound: tens of microseconds); here 16 threads share a column, so the stage costs a few.
//
//   sum_partial_columns(partials, parts, width, stream,
//                       [=] __device__(std::int64_t c, float total) { out[c] = total; });
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kwb {

inline constexpr int kPartialColumnsPerBlock = 32;  // threadIdx.x: one column each
inline constexpr int kPartialLanes = 16;            // threadIdx.y: lanes over the partials

template <class Store>
__global__ void sum_partial_columns_kernel(const float* __restrict__ partials, int parts, std::int64_t width,
                                           Store store) {
  __shared__ float lanes[kPartialLanes][kPartialColumnsPerBlock + 1];  // (lane, column), padded
  const std::int64_t c = blockIdx.x * std::int64_t{kPartialColumnsPerBlock} + threadIdx.x;
  float sum = 0;
  if (c < width) {
#pragma unroll 4
    for (int p = threadIdx.y; p < parts; p += kPartialLanes) sum += partials[p * width + c];
  }
  lanes[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && c < width) {
    float total = 0;
#pragma unroll
    for (int k = 0; k < kPartialLanes; ++k) total += lanes[k][threadIdx.x];
    store(c, total);
  }
}

// store(c, sum over p of partials[p * width + c]) for every c in [0, width); one launch.
// store is a __device__ lambda (nvcc --extended-lambda), e.g. writing two outputs side by side.
template <class Store>
void sum_partial_columns(const float* partials, int parts, std::int64_t width, cudaStream_t stream, Store store) {
  const auto blocks = static_cast<unsigned>((width + kPartialColumnsPerBlock - 1) / kPartialColumnsPerBlock);
  sum_partial_columns_kernel<<<blocks, dim3(kPartialColumnsPerBlock, kPartialLanes), 0, stream>>>(partials, parts,
                                                                                                   width, store);
}

}  // namespace kwb
