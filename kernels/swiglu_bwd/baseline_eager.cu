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

#include "harness/catalogue/device_types.cuh"
#include "harness/catalogue/registry.hpp"
#include "kernels/common/eager_ops.cuh"

namespace kwb {
namespace {

// A function template, not a generic lambda: nvcc allows no __device__ lambda inside the latter.
template <class T>
void launch_typed(const LaunchArgs& a) {
  const std::int64_t n = a.shape.at("rows") * a.shape.at("cols");
  const T* gate = static_cast<const T*>(a.tensors[0]);
  const T* up = static_cast<const T*>(a.tensors[1]);
  const T* dout = static_cast<const T*>(a.tensors[2]);
  T* dgate = static_cast<T*>(a.tensors[3]);
  T* dup = static_cast<T*>(a.tensors[4]);
  T* s = static_cast<T*>(a.workspace);
  T* t = s + n;
  eager_map(n, a.stream, [=] __device__(std::int64_t i) {
    const float g = to_float(gate[i]);
    s[i] = from_float<T>(g / (1.0f + expf(-g)));
  });
  eager_map(n, a.stream, [=] __device__(std::int64_t i) {
    dup[i] = from_float<T>(to_float(dout[i]) * to_float(s[i]));
  });
  eager_map(n, a.stream, [=] __device__(std::int64_t i) {
    t[i] = from_float<T>(to_float(dout[i]) * to_float(up[i]));
  });
  eager_map(n, a.stream, [=] __device__(std::int64_t i) {
    const float g = to_float(gate[i]);
    const float sig = 1.0f / (1.0f + expf(-g));
    dgate[i] = from_float<T>(to_float(t[i]) * sig * (1.0f + g * (1.0f - sig)));
  });
}

void launch(const LaunchArgs& a) {
  dispatch_dtype(a.dtype, [&](auto tag) { launch_typed<decltype(tag)>(a); });
}

KWB_REGISTER_VARIANT(Variant{
    .op = "swiglu_bwd",
    .name = "baseline_eager_4_launches",
    .role = Role::baseline,
    .description = "op by op as PyTorch autograd (silu recomputed): silu, dout * s, dout * up, silu_backward",
    .launch = launch,
    .refuse = {},
    .workspace_bytes =
        [](const Shape& s, DType dtype) {
          return 2 * static_cast<std::size_t>(s.at("rows")) * static_cast<std::size_t>(s.at("cols")) *
                 dtype_size(dtype);
        },
});

}  // namespace
}  // namespace kwb
