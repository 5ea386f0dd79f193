// mhc_pre_map_bwd_hpre baseline_eager_autograd: dh_pre as PyTorch autograd runs it for the
// forward of baseline_eager_mul_sum, X = (h_pre[..., None] * H).sum(1).to(H.dtype), given dX:
//
//   g = dX.to(torch.float32)           # 1  ToCopyBackward0 of .to(H.dtype) (bf16 only)
//   g = g[:, None, :].expand(T, n, C)  #    SumBackward0: a view, no launch
//   prod = g * H                       # 2  MulBackward0 wrt h_pre[..., None]: [T, n, C] fp32
//   dh_pre = prod.sum(-1)              # 3  sum_to_size([T, n, 1]): one block per (t, i) row of C
//
// 3 launches in bf16, 2 in fp32. Bytes, bf16: dX 2 T C + g 4 T C write + 4 T C read + H 8 T C +
// prod 16 T C write + 16 T C read = 50 T C vs the fused 10 T C (5x); fp32: 52 T C vs 20 T C.
// The row sum is kernels/common/eager_ops.cuh's block-per-row reduction (deterministic).
// Workspace: prod [T, n, C] fp32, and g [T, C] fp32 in bf16.
#include <cstdint>
#include <type_traits>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/eager_ops.cuh"
#include "reference/mhc.hpp"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<dx_times_h>, ...).
namespace step {
struct dx_times_h;
struct cast_dx_to_f32;
struct dx_f32_times_h;
struct dh_pre_sum_over_channels;
}  // namespace step

namespace {

constexpr std::int64_t n = kMhcStreams;

template <class T>
void launch_typed(const LaunchArgs& a) {
  const auto [tokens, C] = MhcAxes::of(a.shape);
  const T* H = a.tensor<const T>("H");
  const T* dX = a.tensor<const T>("dX");
  float* dh_pre = a.tensor<float>("dh_pre");
  float* prod = static_cast<float*>(a.workspace);  // [T, n, C]
  if constexpr (std::is_same_v<T, float>) {
    eager_map<step::dx_times_h>(tokens * n * C, a.stream, [=] __device__(std::int64_t e) {
      const std::int64_t row = e / C, c = e % C;  // row = t * n + i
      prod[e] = dX[row / n * C + c] * H[e];
    });
  } else {
    float* g = prod + tokens * n * C;  // [T, C]
    eager_map<step::cast_dx_to_f32>(tokens * C, a.stream, [=] __device__(std::int64_t e) { g[e] = to_float(dX[e]); });
    eager_map<step::dx_f32_times_h>(tokens * n * C, a.stream, [=] __device__(std::int64_t e) {
      const std::int64_t row = e / C, c = e % C;
      prod[e] = g[row / n * C + c] * to_float(H[e]);
    });
  }
  eager_row_sum<step::dh_pre_sum_over_channels>(prod, dh_pre, tokens * n, C, a.stream);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mhc_pre_map_bwd_hpre",
    .name = "baseline_eager_autograd",
    .role = Role::baseline,
    .description = "op by op as PyTorch autograd: dX.to(fp32), * H in fp32, .sum(-1) "
                   "(3 launches in bf16, 2 in fp32)",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .workspace_bytes =
        [](const Shape& s, DType dtype) {
          const auto [tokens, channels] = MhcAxes::of(s);
          const auto tc = static_cast<std::size_t>(tokens) * static_cast<std::size_t>(channels);
          const std::size_t g = dtype == DType::fp32 ? 0 : tc;
          return (static_cast<std::size_t>(n) * tc + g) * sizeof(float);
        },
});

}  // namespace
}  // namespace kwb
