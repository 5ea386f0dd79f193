// Stage 2 of the fused rmsnorm_bwd variants: dweight = the fixed-order column sum of the
// per-block fp32 partials that stage 1 left in the workspace.
#pragma once

#include <cstdint>

namespace kwb {

// dweight[c] = sum over p of partials[p, c]: a block covers 32 columns with 32 slices of the
// parts (slice s sums parts s, s + 32, ... in order), then one thread per column adds the 32
// slice sums in order. Coalesced 128-byte rows, and 32x the parallelism of a loop per column;
// no atomics, so the same bits on every run of a given GPU. (A template so that every
// translation unit including this header may instantiate it.)
template <int kSlices = 32>
__global__ void __launch_bounds__(1024) sum_parts_by_column(const float* __restrict__ partials, int parts, int cols,
                                                            float* __restrict__ out) {
  __shared__ float slice_sums[kSlices][33];  // (slice, column), padded against bank conflicts
  const int c = blockIdx.x * 32 + threadIdx.x;
  float sum = 0.f;
  if (c < cols)
    for (int p = threadIdx.y; p < parts; p += kSlices) sum += partials[std::int64_t{p} * cols + c];
  slice_sums[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && c < cols) {
    float total = 0.f;
    for (int s = 0; s < kSlices; ++s) total += slice_sums[s][threadIdx.x];
    out[c] = total;
  }
}

// Launches sum_parts_by_column over `cols` columns of `parts` partial rows.
inline void launch_sum_parts_by_column(const float* partials, int parts, int cols, float* out, cudaStream_t stream) {
  const dim3 block(32, 32);
  sum_parts_by_column<32><<<static_cast<unsigned>((cols + 31) / 32), block, 0, stream>>>(partials, parts, cols, out);
}

}  // namespace kwb
