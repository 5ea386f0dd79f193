// Test-only rmsnorm_fwd variant with a planted numerical defect that the old flat tolerance let
// through and the error bound catches: outputs flushed to 0 where |x| < 2^-8 (about 0.3% of
// N(0, 1) inputs; the error, at most 2^-8 rstd w ~ 6e-3, sat under bf16's flat atol 8e-3).
// Otherwise a plain one-block-per-row RMSNorm in fp32. Hidden from `list` and default sweeps
// (`--include-test-variants`); tests/gpu/norm_bound_faults_test.cpp runs it.
#include <cstdint>

#include "harness/catalogue/device_types.cuh"
#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/block_reduce.cuh"
#include "reference/rmsnorm.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void rmsnorm_flush_small(const T* x, const T* w, T* y, std::int64_t cols, float eps) {
  __shared__ float scratch[32];
  const T* xr = x + blockIdx.x * cols;
  T* yr = y + blockIdx.x * cols;
  float sum_sq = 0;
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    sum_sq += to_float(xr[c]) * to_float(xr[c]);
  const float inv_rms = rsqrtf(block_sum(sum_sq, scratch) / static_cast<float>(cols) + eps);
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float v = to_float(xr[c]);
    yr[c] =
        from_float<T>(fabsf(v) < 0.00390625f ? 0.0f : v * inv_rms * to_float(w[c]));  // the defect
  }
}

KWB_REGISTER_VARIANT(Variant{
    .op = "rmsnorm_fwd",
    .name = "test_fault_flush_small_outputs",
    .role = Role::fused,
    .description = "TEST ONLY: writes y = 0 where |x| < 2^-8 (inside the old flat bf16 atol, "
                   "outside the bound)",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) {
      const auto [rows, cols] = RowsCols::of(a.shape);
      rmsnorm_flush_small<T><<<static_cast<unsigned>(rows), kThreads, 0, a.stream>>>(
          a.tensor<const T>("x"), a.tensor<const T>("weight"), a.tensor<T>("y"), cols,
          static_cast<float>(kRmsNormEps));
    }),
    .test_only = true,
});

}  // namespace
}  // namespace kwb
