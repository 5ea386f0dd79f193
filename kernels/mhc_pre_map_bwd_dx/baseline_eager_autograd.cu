// mhc_pre_map_bwd_dx baseline_eager_autograd: dH as PyTorch autograd runs it for the forward of
// baseline_eager_mul_sum, X = (h_pre[..., None] * H).sum(1).to(H.dtype), given dX:
//
//   g = dX.to(torch.float32)          # 1  ToCopyBackward0 of .to(H.dtype) (bf16 only)
//   g = g[:, None, :].expand(T, n, C) #    SumBackward0: a view, no launch
//   dH32 = g * h_pre[..., None]       # 2  MulBackward0 wrt H: [T, n, C] fp32
//   dH = dH32.to(H.dtype)             # 3  the engine casts the gradient to H's dtype (bf16 only)
//
// 3 launches in bf16, 1 in fp32 (launch 2 writes dH itself). Bytes, bf16: dX 2 T C + g 4 T C
// write + 4 T C read (n readers of one row, L2 mostly absorbs the repeats) + dH32 16 T C write +
// 16 T C read + dH 8 T C = 50 T C vs the fused 10 T C; fp32: 20 T C, the same as the fused
// kernel: there the fused kernel can only win on access width and tokens in flight.
// Workspace (bf16): g [T, C] fp32 and dH32 [T, n, C] fp32.
#include <cstdint>
#include <type_traits>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/eager_ops.cuh"
#include "reference/mhc.hpp"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<dx_times_h_pre>, ...).
namespace step {
struct dx_times_h_pre;
struct cast_dx_to_f32;
struct dx_f32_times_h_pre;
struct cast_dh_to_dtype;
}  // namespace step

namespace {

constexpr std::int64_t n = kMhcStreams;

template <class T>
void launch_typed(const LaunchArgs& a) {
  const auto [tokens, C] = MhcAxes::of(a.shape);
  const float* h_pre = a.tensor<const float>("h_pre");
  const T* dX = a.tensor<const T>("dX");
  T* dH = a.tensor<T>("dH");
  if constexpr (std::is_same_v<T, float>) {
    eager_map<step::dx_times_h_pre>(tokens * n * C, a.stream, [=] __device__(std::int64_t e) {
      const std::int64_t row = e / C, c = e % C;  // row = t * n + i
      dH[e] = dX[row / n * C + c] * h_pre[row];
    });
  } else {
    float* g = static_cast<float*>(a.workspace);  // [T, C]
    float* dh32 = g + tokens * C;                 // [T, n, C]
    eager_map<step::cast_dx_to_f32>(tokens * C, a.stream, [=] __device__(std::int64_t e) { g[e] = to_float(dX[e]); });
    eager_map<step::dx_f32_times_h_pre>(tokens * n * C, a.stream, [=] __device__(std::int64_t e) {
      const std::int64_t row = e / C, c = e % C;
      dh32[e] = g[row / n * C + c] * h_pre[row];
    });
    eager_map<step::cast_dh_to_dtype>(tokens * n * C, a.stream, [=] __device__(std::int64_t e) { dH[e] = from_float<T>(dh32[e]); });
  }
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mhc_pre_map_bwd_dx",
    .name = "baseline_eager_autograd",
    .role = Role::baseline,
    .description = "op by op as PyTorch autograd: dX.to(fp32), * h_pre[..., None] in fp32, .to(dtype) "
                   "(3 launches in bf16, 1 in fp32)",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .workspace_bytes =
        [](const Shape& s, DType dtype) -> std::size_t {
          if (dtype == DType::fp32) return 0;
          const auto [tokens, channels] = MhcAxes::of(s);
          const auto tc = static_cast<std::size_t>(tokens) * static_cast<std::size_t>(channels);
          return (1 + static_cast<std::size_t>(n)) * tc * sizeof(float);
        },
});

}  // namespace
}  // namespace kwb
