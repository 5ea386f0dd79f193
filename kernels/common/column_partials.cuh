// Deterministic column sums of per-block partials, many threads per column: the second stage of
// a weight gradient summed over all rows. Each block of stage 1 leaves one row of fp32 partial
// sums; this sums the `parts` rows of every column in a fixed order (16 strided lanes, then the
// lanes in index order), so two runs give the same bits, with no atomics.
//
// eager_ops.cuh's sum_partials gives each column one thread, which is what a framework's small
// reduction does but leaves a few thousand threads looping over hundreds of partials (latency-
// bound: tens of microseconds); here 16 threads share a column group, each with up to 8 loads in
// flight, and rows whose width is a multiple of 4 are read as float4 (4 columns a thread): one
// wave of blocks and one or two load round trips per thread at LLM widths.
//
// The launch is a programmatic dependent launch (dependent_launch.cuh): a stage-1 kernel that
// executes allow_dependent_launch() lets this grid's blocks become resident while it runs, and
// they wait until stage 1 has completed and its writes are visible.
//
//   sum_partial_columns(partials, parts, width, stream,
//                       [=] __device__(std::int64_t c, float total) { out[c] = total; });
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

#include "harness/catalogue/cuda_check.hpp"
#include "kernels/common/dependent_launch.cuh"

namespace kwb {

inline constexpr int kPartialColumnsPerBlock = 32;  // threadIdx.x: one column group (1 or 4 columns) each
inline constexpr int kPartialLanes = 16;            // threadIdx.y: lanes over the partials
inline constexpr int kPartialBatch = 8;             // loads a thread issues before adding them

namespace partial_columns {

__device__ __forceinline__ void add(float& a, float b) { a += b; }
__device__ __forceinline__ void add(float4& a, const float4& b) { a.x += b.x, a.y += b.y, a.z += b.z, a.w += b.w; }
__device__ __forceinline__ float lane_of(const float& v, int) { return v; }
__device__ __forceinline__ float lane_of(const float4& v, int j) { return j == 0 ? v.x : j == 1 ? v.y : j == 2 ? v.z : v.w; }

// W columns per thread (1 or 4): the partials read as float or float4 rows of width / W groups.
template <int W, class Store>
__global__ void sum_kernel(const float* __restrict__ partials, int parts, std::int64_t width, Store store) {
  using Group = std::conditional_t<W == 4, float4, float>;
  wait_for_previous_grid();  // stage 1 complete, its writes visible
  __shared__ Group lanes[kPartialLanes][kPartialColumnsPerBlock + (W == 1 ? 1 : 0)];  // (lane, group)
  const std::int64_t groups = width / W;
  const std::int64_t g = blockIdx.x * std::int64_t{kPartialColumnsPerBlock} + threadIdx.x;
  const Group* rows = reinterpret_cast<const Group*>(partials);
  Group sum{};
  if (g < groups) {
    // Partials y, y + 16, y + 32, ... in increasing order: the batch only changes when the loads
    // are issued, not the order of the additions (a missing partial adds +0, which changes no bits).
    for (int p0 = threadIdx.y; p0 < parts; p0 += kPartialBatch * kPartialLanes) {
      Group v[kPartialBatch];
#pragma unroll
      for (int b = 0; b < kPartialBatch; ++b) {
        const int p = p0 + b * kPartialLanes;
        v[b] = p < parts ? rows[p * groups + g] : Group{};
      }
#pragma unroll
      for (int b = 0; b < kPartialBatch; ++b) add(sum, v[b]);
    }
  }
  lanes[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && g < groups) {
    Group total{};
#pragma unroll
    for (int k = 0; k < kPartialLanes; ++k) add(total, lanes[k][threadIdx.x]);
#pragma unroll
    for (int j = 0; j < W; ++j) store(g * W + j, lane_of(total, j));
  }
}

}  // namespace partial_columns

// store(c, sum over p of partials[p * width + c]) for every c in [0, width); one launch,
// programmatically dependent on the previous kernel in the stream (see above).
// store is a __device__ lambda (nvcc --extended-lambda), e.g. writing two outputs side by side.
template <class Store>
void sum_partial_columns(const float* partials, int parts, std::int64_t width, cudaStream_t stream, Store store) {
  const bool by4 = width % 4 == 0 && reinterpret_cast<std::uintptr_t>(partials) % 16 == 0;
  const std::int64_t groups = by4 ? width / 4 : width;
  const dim3 grid(static_cast<unsigned>((groups + kPartialColumnsPerBlock - 1) / kPartialColumnsPerBlock));
  const dim3 block(kPartialColumnsPerBlock, kPartialLanes);
  const cudaError_t launched =
      by4 ? launch_dependent(partial_columns::sum_kernel<4, Store>, grid, block, stream, partials, parts, width, store)
          : launch_dependent(partial_columns::sum_kernel<1, Store>, grid, block, stream, partials, parts, width, store);
  cuda_check(launched, "launch the column-partials sum");
}

}  // namespace kwb
