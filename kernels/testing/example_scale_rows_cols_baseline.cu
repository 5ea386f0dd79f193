// example_scale_rows_cols baseline_eager_2_muls: the op as eager PyTorch runs it.
//
//   t = x * scale[:, None]   # mul kernel: storage dtype in and out, fp32 math inside
//   y = t * weight           # mul kernel
//
// Two launches in every dtype, each a plain grid-stride loop (kernels/common/eager_ops.cuh) with
// broadcast indexing; the intermediate t makes one extra round trip through memory in the
// storage dtype (4 passes over rows * cols instead of the fused variant's 2) and is rounded
// once more. This is what the fused variant's speedup is quoted against.
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/eager_ops.cuh"
#include "reference/rows_cols_op.hpp"
#include "reference/testing/example_scale_rows_cols.hpp"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<times_scale>, ...).
namespace step {
struct times_scale;
struct times_weight;
}  // namespace step

namespace {

// A function template, not a generic lambda: nvcc allows no __device__ lambda inside the latter.
template <class T>
void launch(const LaunchArgs& a) {
  const auto [rows, cols] = RowsCols::of(a.shape);
  const T* x = a.tensor<const T>("x");
  const T* scale = a.tensor<const T>("scale");
  const T* weight = a.tensor<const T>("weight");
  T* y = a.tensor<T>("y");
  T* t = static_cast<T*>(a.workspace);  // [rows, cols], workspace_bytes below
  eager_map<step::times_scale>(rows * cols, a.stream, [=] __device__(std::int64_t i) {
    t[i] = from_float<T>(to_float(x[i]) * to_float(scale[i / cols]));
  });
  eager_map<step::times_weight>(rows * cols, a.stream, [=] __device__(std::int64_t i) {
    y[i] = from_float<T>(to_float(t[i]) * to_float(weight[i % cols]));
  });
}

KWB_REGISTER_VARIANT(Variant{
    .op = example_scale_rows_cols::kOp,
    .name = "baseline_eager_2_muls",
    .role = Role::baseline,
    .description = "op by op as eager PyTorch: t = x * scale[:, None] (storage dtype), then y = t * weight",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .workspace_bytes =
        [](const Shape& s, DType dtype) {
          const auto [rows, cols] = RowsCols::of(s);
          return static_cast<std::size_t>(rows * cols) * dtype_size(dtype);
        },
    .test_only = true,  // its op is test-only; a real op's variants leave this false
});

}  // namespace
}  // namespace kwb
