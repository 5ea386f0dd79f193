// The two one-block launches the fused cross_entropy kernels share: the count of valid labels
// (before the gradient, which needs 1 / n_valid) and the mean of the per-row losses (after).
// One block each, a fixed summation order: deterministic, no float atomics.
#pragma once

#include <cstdint>

#include "kernels/common/block_reduce.cuh"
#include "reference/cross_entropy.hpp"

namespace kwb::xent {

// n_valid = number of labels that name a class. static: each kernel file gets its own copy
// (the build compiles without relocatable device code).
static __global__ void count_valid_kernel(const int* labels, std::int64_t tokens, std::int64_t vocab,
                                          float* n_valid) {
  __shared__ float scratch[32];
  float count = 0;
  for (std::int64_t r = threadIdx.x; r < tokens; r += blockDim.x)
    count += cross_entropy_label_counts(labels[r], vocab) ? 1.0f : 0.0f;  // exact below 2^24
  count = block_sum(count, scratch);
  if (threadIdx.x == 0) *n_valid = count;
}

// loss = sum of row losses / n_valid (0 when no label counts).
static __global__ void mean_loss_kernel(const float* row_loss, std::int64_t tokens, const float* n_valid,
                                        float* loss) {
  __shared__ float scratch[32];
  float sum = 0;
  for (std::int64_t r = threadIdx.x; r < tokens; r += blockDim.x) sum += row_loss[r];
  sum = block_sum(sum, scratch);
  if (threadIdx.x == 0) *loss = *n_valid > 0 ? sum / *n_valid : 0.0f;
}

}  // namespace kwb::xent
