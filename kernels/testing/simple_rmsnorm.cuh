// A plain, correct RMSNorm forward (one block of 256 threads per row) for the test-only variants
// that cheat around it: they are correct where the harness looks and wrong elsewhere, so the
// kernel itself must be beyond doubt, not fast.
#pragma once

#include <cstdint>

#include "harness/catalogue/device_types.cuh"
#include "harness/catalogue/registry.hpp"
#include "kernels/common/block_reduce.cuh"
#include "reference/rmsnorm.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb::testing {

inline constexpr int kSimpleRmsNormThreads = 256;

template <class T>
__global__ void simple_rmsnorm_rows(const T* x, const T* w, T* y, std::int64_t cols, float eps) {
  __shared__ float scratch[32];
  const T* xr = x + static_cast<std::int64_t>(blockIdx.x) * cols;
  T* yr = y + static_cast<std::int64_t>(blockIdx.x) * cols;
  float sum_sq = 0;
  for (std::int64_t c = threadIdx.x; c < cols; c += kSimpleRmsNormThreads) {
    const float v = to_float(xr[c]);
    sum_sq += v * v;
  }
  const float inv_rms = rsqrtf(block_sum(sum_sq, scratch) / static_cast<float>(cols) + eps);
  for (std::int64_t c = threadIdx.x; c < cols; c += kSimpleRmsNormThreads)
    yr[c] = from_float<T>(to_float(xr[c]) * inv_rms * to_float(w[c]));
}

// y = rmsnorm(x) * weight for the first `rows` rows of the case (all of them by default).
template <class T>
void launch_simple_rmsnorm(const LaunchArgs& a, std::int64_t rows = -1) {
  const auto [all_rows, cols] = RowsCols::of(a.shape);
  if (rows < 0) rows = all_rows;
  if (rows == 0) return;
  simple_rmsnorm_rows<T><<<static_cast<unsigned>(rows), kSimpleRmsNormThreads, 0, a.stream>>>(
      a.tensor<const T>("x"), a.tensor<const T>("weight"), a.tensor<T>("y"), cols, static_cast<float>(kRmsNormEps));
}

// The refusal every such variant shares: one block per row.
inline std::optional<std::string> refuse_beyond_grid(const Shape& s, DType) {
  if (RowsCols::of(s).rows > 2147483647) return "rows beyond the grid";
  return std::nullopt;
}

}  // namespace kwb::testing
