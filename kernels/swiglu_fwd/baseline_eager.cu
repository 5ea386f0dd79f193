// swiglu_fwd baseline_eager_2_launches: SwiGLU as eager PyTorch runs it.
//
//   s = F.silu(gate)      # silu kernel: storage dtype in and out, fp32 math inside (no casts)
//   out = s * up          # mul kernel
//
// Two launches in every dtype: PyTorch's silu and mul take bf16/fp16 tensors directly and do
// their math in fp32 registers, so no cast kernels run; the intermediate s makes one extra
// round trip through memory in the storage dtype (5 tensor passes instead of 3). Elementwise
// kernels are plain grid-stride loops (kernels/common/eager_ops.cuh), and silu uses the
// accurate expf and a true division, as PyTorch's kernel does (no fast math).
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/eager_ops.cuh"
#include "reference/rows_cols_op.hpp"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<silu_gate>, ...).
namespace step {
struct silu_gate;
struct times_up;
}  // namespace step

namespace {

// A function template, not a generic lambda: nvcc allows no __device__ lambda inside the latter.
template <class T>
void launch_typed(const LaunchArgs& a) {
  const auto [rows, cols] = RowsCols::of(a.shape);
  const std::int64_t n = rows * cols;
  const T* gate = a.tensor<const T>("gate");
  const T* up = a.tensor<const T>("up");
  T* out = a.tensor<T>("out");
  T* s = static_cast<T*>(a.workspace);
  eager_map<step::silu_gate>(n, a.stream, [=] __device__(std::int64_t i) {
    const float g = to_float(gate[i]);
    s[i] = from_float<T>(g / (1.0f + expf(-g)));
  });
  eager_map<step::times_up>(n, a.stream, [=] __device__(std::int64_t i) {
    out[i] = from_float<T>(to_float(s[i]) * to_float(up[i]));
  });
}

KWB_REGISTER_VARIANT(Variant{
    .op = "swiglu_fwd",
    .name = "baseline_eager_2_launches",
    .role = Role::baseline,
    .description = "op by op as eager PyTorch: F.silu(gate) (storage dtype), then * up",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = {},
    .workspace_bytes =
        [](const Shape& s, DType dtype) {
          const auto [rows, cols] = RowsCols::of(s);
          return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * dtype_size(dtype);
        },
});

}  // namespace
}  // namespace kwb
