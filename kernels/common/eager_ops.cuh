// The generic kernels an eager framework runs for each op of an unfused chain: one grid-stride
// elementwise launch per op, one launch per row reduction, one per column reduction. Baselines
// compose them op by op so that each framework op is one launch and one trip through memory,
// which is the honest "before" of a fused kernel's speedup (and its kernel count).
//
// Every launch names its step with a tag type declared in kwb::step: the tag is the kernel's first
// template argument, so the kernel breakdown reads "eager_map_kernel<times_weight>" where the
// lambda alone would read "lambda #2 of launch_typed<bf16>" (reports/review/kernel_label.hpp).
// Name a step as a framework op would be named, by what it computes. The step has no default: a
// launch without one does not compile.
//
//   namespace kwb::step { struct times_b; struct mean_over_cols; struct sum_over_rows; }
//   eager_map<step::times_b>(n, stream, [=] __device__(std::int64_t i) { out[i] = a[i] * b[i]; });
//   eager_row_sum<step::mean_over_cols>(in, out, rows, cols, stream, /*scale=*/1.0f / cols);
//   eager_col_sum<step::sum_over_rows>(in, out, rows, cols, partials, stream);  // 2 launches
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "kernels/common/block_reduce.cuh"

namespace kwb {

// The steps' tag types live here, declared (never defined) by the files that launch them.
namespace step {}

inline constexpr int kEagerThreads = 256;

inline unsigned eager_grid(std::int64_t n) {
  return static_cast<unsigned>(std::max<std::int64_t>(
      1, std::min<std::int64_t>((n + kEagerThreads - 1) / kEagerThreads, 65535 * 8)));
}

template <class Step, class Fn>
__global__ void eager_map_kernel(std::int64_t n, Fn fn) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    fn(i);
}

// One elementwise launch over n indices; fn(i) is a __device__ lambda (nvcc --extended-lambda).
template <class Step, class Fn>
void eager_map(std::int64_t n, cudaStream_t stream, Fn fn) {
  eager_map_kernel<Step><<<eager_grid(n), kEagerThreads, 0, stream>>>(n, fn);
}

// out[r] = scale * sum_c value(r, c): one block per row, as a framework's last-dim reduction.
template <class Step, class Value>
__global__ void eager_row_reduce_kernel(float* out, std::int64_t cols, float scale, Value value) {
  __shared__ float scratch[32];
  const std::int64_t r = blockIdx.x;
  float sum = 0;
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += value(r, c);
  sum = block_sum(sum, scratch);
  if (threadIdx.x == 0) out[r] = sum * scale;
}

template <class Step, class Value>
void eager_row_reduce(float* out, std::int64_t rows, std::int64_t cols, float scale, cudaStream_t stream,
                      Value value) {
  eager_row_reduce_kernel<Step><<<static_cast<unsigned>(rows), kEagerThreads, 0, stream>>>(out, cols, scale, value);
}

// out[r] = scale * sum_c in[r * cols + c]: sum (or mean) over the last dim of a row-major tensor.
template <class Step>
void eager_row_sum(const float* in, float* out, std::int64_t rows, std::int64_t cols, cudaStream_t stream,
                   float scale = 1.0f) {
  eager_row_reduce<Step>(out, rows, cols, scale, stream,
                   [=] __device__(std::int64_t r, std::int64_t c) { return in[r * cols + c]; });
}

// Deterministic column sums in two stages, with no atomics: stage 1 (the caller's kernel, or
// eager_col_sum below) leaves `parts` rows of fp32 partial sums, each over a fixed slice of the
// rows; stage 2 sums the partials of each column in index order. The result does not depend on
// scheduling, so two runs give the same bits.
template <class Step, class Out, class Convert>
__global__ void sum_partials_kernel(const float* partials, int parts, std::int64_t cols, Out* out, Convert convert) {
  const std::int64_t c = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  if (c >= cols) return;
  float sum = 0;
  for (int p = 0; p < parts; ++p) sum += partials[p * cols + c];
  out[c] = convert(sum);
}

// out[c] = sum over p of partials[p, c], written through convert (e.g. to the case dtype).
template <class Step, class Out, class Convert>
void sum_partials(const float* partials, int parts, std::int64_t cols, Out* out, cudaStream_t stream,
                  Convert convert) {
  sum_partials_kernel<Step><<<static_cast<unsigned>((cols + 255) / 256), 256, 0, stream>>>(partials, parts, cols, out,
                                                                                       convert);
}
template <class Step>
void sum_partials(const float* partials, int parts, std::int64_t cols, float* out, cudaStream_t stream) {
  sum_partials<Step>(partials, parts, cols, out, stream, [] __device__(float v) { return v; });
}

// Number of partial rows eager_col_sum uses for `rows` rows (its workspace: parts * cols floats).
inline int eager_col_sum_parts(std::int64_t rows) {
  return static_cast<int>(std::min<std::int64_t>(rows, 256));
}

// out[c] = sum_r in[r * cols + c]: a framework's sum over dim 0, two launches. `partials` holds
// eager_col_sum_parts(rows) * cols floats. Both launches carry the caller's step.
template <class Step>
void eager_col_sum(const float* in, float* out, std::int64_t rows, std::int64_t cols, float* partials,
                          cudaStream_t stream) {
  const int parts = eager_col_sum_parts(rows);
  const std::int64_t per_part = (rows + parts - 1) / parts;
  const std::int64_t threads = parts * cols;
  eager_map<Step>(threads, stream, [=] __device__(std::int64_t i) {
    const std::int64_t p = i / cols, c = i % cols;
    const std::int64_t end = std::min<std::int64_t>(rows, (p + 1) * per_part);
    float sum = 0;
    for (std::int64_t r = p * per_part; r < end; ++r) sum += in[r * cols + c];
    partials[i] = sum;
  });
  sum_partials<Step>(partials, parts, cols, out, stream);
}

}  // namespace kwb
