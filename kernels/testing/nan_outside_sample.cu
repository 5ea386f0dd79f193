// rmsnorm_fwd test_nan_outside_sample (TEST ONLY): a correct RMSNorm that then writes one NaN
// in a row the verifier does not sample (at shapes large enough to be sampled). The host-side
// comparison never sees that row; the device scan of the whole output must fail the case.
#include <cmath>
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "harness/worker/verify/verify.hpp"
#include "kernels/testing/simple_rmsnorm.cuh"
#include "reference/rows_cols_op.hpp"

namespace kwb {
namespace {

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
  testing::launch_simple_rmsnorm<T>(a);
  write_one_nan<T><<<1, 1, 0, a.stream>>>(a.tensor<T>("y"), nan_at);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "rmsnorm_fwd",
    .name = "test_nan_outside_sample",
    .role = Role::fused,
    .description = "TEST ONLY: correct output but one NaN in a row outside the verification sample",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = testing::refuse_beyond_grid,
    .test_only = true,
});

}  // namespace
}  // namespace kwb
