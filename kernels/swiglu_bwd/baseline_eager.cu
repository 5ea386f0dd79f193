// swiglu_bwd baseline_eager_4_launches: the backward of F.silu(gate) * up as PyTorch autograd
// runs it, given dout.
//
//   s = F.silu(gate)                               # 1  silu: recomputes the forward activation
//   dup = dout * s                                 # 2  MulBackward0, gradient of up
//   t = dout * up                                  # 3  MulBackward0, gradient of s
//   dgate = torch.ops.aten.silu_backward(t, gate)  # 4  SiluBackward0: t * sig * (1 + gate * (1 - sig))
//
// Autograd saves s from the forward and runs launches 2-4 (3 kernels); this op's inputs are
// gate, up and dout only (the fused kernel recomputes sig from gate and saves the activation
// memory), so the honest eager equivalent recomputes s first, as activation checkpointing does:
// 4 launches in every dtype. PyTorch's silu, mul and silu_backward take bf16/fp16 tensors and
// do their math in fp32 registers, so no cast kernels run; s and t are written in the storage
// dtype and read back (9 tensor passes instead of 5). The "~12 kernels -> 1" quoted for SwiGLU
// backward counts a decomposed fp32 chain (casts, sigmoid, 1 - sig, products, casts back), not
// what autograd runs for F.silu. Elementwise kernels are plain grid-stride loops
// (kernels/common/eager_ops.cuh), with the accurate expf and true division of PyTorch's kernels.
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/eager_ops.cuh"
#include "reference/rows_cols_op.hpp"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<silu_gate>, ...).
namespace step {
struct silu_gate;
struct dout_times_silu;
struct dout_times_up;
struct silu_backward;
}  // namespace step

namespace {

// A function template, not a generic lambda: nvcc allows no __device__ lambda inside the latter.
template <class T>
void launch_typed(const LaunchArgs& a) {
  const auto [rows, cols] = RowsCols::of(a.shape);
  const std::int64_t n = rows * cols;
  const T* gate = a.tensor<const T>("gate");
  const T* up = a.tensor<const T>("up");
  const T* dout = a.tensor<const T>("dout");
  T* dgate = a.tensor<T>("dgate");
  T* dup = a.tensor<T>("dup");
  T* s = static_cast<T*>(a.workspace);
  T* t = s + n;
  eager_map<step::silu_gate>(n, a.stream, [=] __device__(std::int64_t i) {
    const float g = to_float(gate[i]);
    s[i] = from_float<T>(g / (1.0f + expf(-g)));
  });
  eager_map<step::dout_times_silu>(n, a.stream, [=] __device__(std::int64_t i) {
    dup[i] = from_float<T>(to_float(dout[i]) * to_float(s[i]));
  });
  eager_map<step::dout_times_up>(n, a.stream, [=] __device__(std::int64_t i) {
    t[i] = from_float<T>(to_float(dout[i]) * to_float(up[i]));
  });
  eager_map<step::silu_backward>(n, a.stream, [=] __device__(std::int64_t i) {
    const float g = to_float(gate[i]);
    const float sig = 1.0f / (1.0f + expf(-g));
    dgate[i] = from_float<T>(to_float(t[i]) * sig * (1.0f + g * (1.0f - sig)));
  });
}

KWB_REGISTER_VARIANT(Variant{
    .op = "swiglu_bwd",
    .name = "baseline_eager_4_launches",
    .role = Role::baseline,
    .description = "op by op as PyTorch autograd (silu recomputed): silu, dout * s, dout * up, silu_backward",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = {},
    .workspace_bytes =
        [](const Shape& s, DType dtype) {
          const auto [rows, cols] = RowsCols::of(s);
          return 2 * static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * dtype_size(dtype);
        },
});

}  // namespace
}  // namespace kwb
