// rmsnorm_fwd test_nan_outside_sample (TEST ONLY): a correct RMSNorm that then writes one NaN
// in a row the verifier does not sample (at shapes large enough to be sampled). The host-side
// comparison never sees that row; the device scan of the whole output must fail the case.
#include <cmath>
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "harness/worker/verify/verify.hpp"
#include "kernels/common/block_reduce.cuh"
#include "reference/rmsnorm.hpp"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void rmsnorm_simple(const T* x, const T* w, T* y, std::int64_t cols, float eps) {
  __shared__ float scratch[32];
  const T* xr = x + static_cast<std::int64_t>(blockIdx.x) * cols;
  T* yr = y + static_cast<std::int64_t>(blockIdx.x) * cols;
  float sum_sq = 0;
  for (std::int64_t c = threadIdx.x; c < cols; c += kThreads) {
    const float v = to_float(xr[c]);
    sum_sq += v * v;
  }
  const float inv_rms = rsqrtf(block_sum(sum_sq, scratch) / static_cast<float>(cols) + eps);
  for (std::int64_t c = threadIdx.x; c < cols; c += kThreads)
    yr[c] = from_float<T>(to_float(xr[c]) * inv_rms * to_float(w[c]));
}

template <class T>
__global__ void write_one_nan(T* y, std::int64_t index) {
  y[index] = from_float<T>(NAN);
}

// The first row the verifier leaves out with this case's seed; the last row when it checks them all.
std::int64_t row_outside_sample(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  const auto sampled = rows_to_verify(rows, cols, seed);
  for (std::int64_t r = 0; r < static_cast<std::int64_t>(sampled.size()); ++r)
    if (sampled[static_cast<std::size_t>(r)] != r) return r;
  return rows - 1;
}

template <class T>
void launch(const LaunchArgs& a) {
  const auto [rows, cols] = RowsCols::of(a.shape);
  const std::int64_t nan_at = row_outside_sample(rows, cols, a.seed) * cols + cols / 2;
  rmsnorm_simple<T><<<static_cast<unsigned>(rows), kThreads, 0, a.stream>>>(
      a.tensor<const T>("x"), a.tensor<const T>("weight"), a.tensor<T>("y"), cols, static_cast<float>(kRmsNormEps));
  write_one_nan<T><<<1, 1, 0, a.stream>>>(a.tensor<T>("y"), nan_at);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "rmsnorm_fwd",
    .name = "test_nan_outside_sample",
    .role = Role::fused,
    .description = "TEST ONLY: correct output but one NaN in a row outside the verification sample",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse =
        [](const Shape& s, DType) -> std::optional<std::string> {
          if (RowsCols::of(s).rows > 2147483647) return "rows beyond the grid";
          return std::nullopt;
        },
    .test_only = true,
});

}  // namespace
}  // namespace kwb
