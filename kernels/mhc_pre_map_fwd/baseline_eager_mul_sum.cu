// mhc_pre_map_fwd baseline_eager_mul_sum: the pre-map as eager PyTorch runs it with H in the
// case dtype and the fp32 h_pre of the stack (type promotion makes the product fp32):
//
//   prod = h_pre[..., None] * H      # 1  mul: [T, n, 1] fp32 x [T, n, C] -> [T, n, C] fp32
//   X32 = prod.sum(dim=1)            # 2  sum over the streams (a reduction over a non-last dim:
//                                    #    one output element per thread, n strided reads)
//   X = X32.to(H.dtype)              # 3  cast to bf16 (fp32: .to() returns X32, no launch)
//
// 3 launches in bf16, 2 in fp32. The intermediates are fp32, so every value is exact to fp32 (no
// bf16 rounding of products): the baseline passes the same tolerance as the fused kernel. A
// torch.einsum('ti,tic->tc', ...) would need h_pre cast to H's dtype first (bf16 coefficients,
// an error the fp64 oracle's tolerance does not grant) and runs a cuBLAS batched GEMM of K = 4.
// Bytes, bf16 (s = 2): H 4 T C s + prod 16 T C write + 16 T C read + X32 4 T C write + 4 T C read
// + X 2 T C = 50 T C vs the fused 10 T C (5x); fp32: 52 T C vs 20 T C (2.6x).
// Workspace: prod [T, n, C] fp32, and X32 [T, C] fp32 in bf16.
#include <cstdint>
#include <type_traits>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/eager_ops.cuh"
#include "reference/mhc.hpp"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<h_pre_times_h>, ...).
namespace step {
struct h_pre_times_h;
struct sum_over_streams;
struct cast_x_to_dtype;
}  // namespace step

namespace {

constexpr std::int64_t n = kMhcStreams;

template <class T>
void launch_typed(const LaunchArgs& a) {
  const auto [tokens, C] = MhcAxes::of(a.shape);
  const T* H = a.tensor<const T>("H");
  const float* h_pre = a.tensor<const float>("h_pre");
  T* X = a.tensor<T>("X");
  float* prod = static_cast<float*>(a.workspace);  // [T, n, C]
  eager_map<step::h_pre_times_h>(tokens * n * C, a.stream, [=] __device__(std::int64_t e) {
    prod[e] = h_pre[e / C] * to_float(H[e]);  // e / C = t * n + i
  });
  // fp32: the sum writes X itself; bf16: an fp32 X32, then the cast.
  float* x32 = std::is_same_v<T, float> ? reinterpret_cast<float*>(X) : prod + tokens * n * C;
  eager_map<step::sum_over_streams>(tokens * C, a.stream, [=] __device__(std::int64_t e) {
    const std::int64_t t = e / C, c = e % C;
    float sum = 0;
    for (std::int64_t i = 0; i < n; ++i) sum += prod[(t * n + i) * C + c];
    x32[e] = sum;
  });
  if constexpr (!std::is_same_v<T, float>) {
    eager_map<step::cast_x_to_dtype>(tokens * C, a.stream, [=] __device__(std::int64_t e) { X[e] = from_float<T>(x32[e]); });
  }
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mhc_pre_map_fwd",
    .name = "baseline_eager_mul_sum",
    .role = Role::baseline,
    .description = "op by op as eager PyTorch: (h_pre[..., None] * H) in fp32, .sum(1), .to(dtype) "
                   "(3 launches in bf16, 2 in fp32)",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .workspace_bytes =
        [](const Shape& s, DType dtype) {
          const auto [tokens, channels] = MhcAxes::of(s);
          const auto tc = static_cast<std::size_t>(tokens) * static_cast<std::size_t>(channels);
          const std::size_t x32 = dtype == DType::fp32 ? 0 : tc;
          return (static_cast<std::size_t>(n) * tc + x32) * sizeof(float);
        },
});

}  // namespace
}  // namespace kwb
