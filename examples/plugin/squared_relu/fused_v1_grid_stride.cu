// squared_relu_fwd fused_v1_grid_stride: one launch, a grid-stride loop, one element per thread
// per step, converted through fp32. A plugin's first version: simple and correct; vector loads
// would be its v2.
#include <algorithm>
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "reference/rows_cols_op.hpp"
#include "squared_relu/squared_relu.hpp"

namespace kwb_example {
namespace {

using namespace kwb;

constexpr int kThreads = 256;

template <class T>
__global__ void squared_relu_v1(const T* __restrict__ x, T* __restrict__ y, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const float r = fmaxf(to_float(x[i]), 0.0f);
    y[i] = from_float<T>(r * r);
  }
}

template <class T>
void launch(const LaunchArgs& a) {
  const auto [rows, cols] = RowsCols::of(a.shape);
  const std::int64_t n = rows * cols;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((n + kThreads - 1) / kThreads, 65535 * 8));
  squared_relu_v1<T><<<blocks, kThreads, 0, a.stream>>>(a.tensor<const T>("x"), a.tensor<T>("y"), n);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "squared_relu_fwd",
    .name = "fused_v1_grid_stride",
    .role = Role::fused,
    .description = "one launch, grid-stride loop, scalar loads, fp32 math",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
});

}  // namespace
}  // namespace kwb_example
