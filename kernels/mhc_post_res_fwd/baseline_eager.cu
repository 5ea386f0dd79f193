// mhc_post_res_fwd baseline_eager: the post-residual map op by op as PyTorch eager runs
//
//   Hout = (torch.einsum('tij,tjc->tic', R, H.float()) + h_post[..., None] * F.float()[:, None, :]).to(H.dtype)
//
// R and h_post are fp32 and einsum (a bmm) wants one dtype, so a stack that keeps its fp32
// coefficients exact upcasts the activations and casts the sum back (bf16):
//   Hf = H.float()                                   # 1  cast [T, n, C] -> fp32
//   Ff = F.float()                                   # 2  cast [T, C] -> fp32
//   mix = torch.einsum('tij,tjc->tic', R, Hf)        # 3  bmm, [T, n, C] fp32
//   post = h_post[..., None] * Ff[:, None, :]        # 4  broadcast mul, [T, n, C] fp32
//   s = mix + post                                   # 5  add, [T, n, C] fp32
//   Hout = s.to(torch.bfloat16)                      # 6  cast
// 6 launches in bf16; in fp32 the casts are no-ops: 3 launches (bmm, mul, add writing Hout).
// The bmm is one elementwise launch here (each output a 4-term fp32 dot: cuBLAS's batched GEMM
// with K = 4 is as memory-bound); the add writes into mix in place (PyTorch allocates a new
// tensor; the traffic is the same). bf16 65536 x 1024: ~6.2 GB moved against the fused 1.2 GB.
#include <cstdint>
#include <type_traits>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/eager_ops.cuh"
#include "reference/mhc.hpp"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<cast_h_to_f32>, ...).
namespace step {
struct cast_h_to_f32;
struct cast_f_to_f32;
struct bmm_r_h;
struct h_post_times_f;
struct mix_plus_post_to_hout;
struct mix_plus_post;
struct cast_hout_to_dtype;
}  // namespace step

namespace {

constexpr std::int64_t n = kMhcStreams;

template <class T>
void launch_typed(const LaunchArgs& a) {
  const auto [T_, C] = MhcAxes::of(a.shape);
  const std::int64_t streams = T_ * n * C;  // elements of a [T, n, C] tensor
  const T* H = a.tensor<const T>("H");
  const T* F = a.tensor<const T>("F");
  const float* R = a.tensor<const float>("R");
  const float* h_post = a.tensor<const float>("h_post");
  T* Hout = a.tensor<T>("Hout");
  float* ws = static_cast<float*>(a.workspace);
  float* mix = ws;             // [T, n, C]
  float* post = mix + streams;  // [T, n, C]
  const float* Hf = reinterpret_cast<const float*>(H);
  const float* Ff = reinterpret_cast<const float*>(F);
  if constexpr (!std::is_same_v<T, float>) {
    float* hf = post + streams;  // [T, n, C]
    float* ff = hf + streams;    // [T, C]
    eager_map<step::cast_h_to_f32>(streams, a.stream, [=] __device__(std::int64_t e) { hf[e] = to_float(H[e]); });
    eager_map<step::cast_f_to_f32>(T_ * C, a.stream, [=] __device__(std::int64_t e) { ff[e] = to_float(F[e]); });
    Hf = hf;
    Ff = ff;
  }
  // e indexes [T, n, C]: row = t n + i, c = e % C; R[t, i, :] starts at row n.
  eager_map<step::bmm_r_h>(streams, a.stream, [=] __device__(std::int64_t e) {
    const std::int64_t row = e / C, c = e - row * C, t = row / n;
    float v = 0;
    for (std::int64_t j = 0; j < n; ++j) v += R[row * n + j] * Hf[(t * n + j) * C + c];
    mix[e] = v;
  });
  eager_map<step::h_post_times_f>(streams, a.stream, [=] __device__(std::int64_t e) {
    const std::int64_t row = e / C, c = e - row * C, t = row / n;
    post[e] = h_post[row] * Ff[t * C + c];
  });
  if constexpr (std::is_same_v<T, float>) {
    eager_map<step::mix_plus_post_to_hout>(streams, a.stream, [=] __device__(std::int64_t e) { Hout[e] = mix[e] + post[e]; });
  } else {
    eager_map<step::mix_plus_post>(streams, a.stream, [=] __device__(std::int64_t e) { mix[e] = mix[e] + post[e]; });
    eager_map<step::cast_hout_to_dtype>(streams, a.stream, [=] __device__(std::int64_t e) { Hout[e] = from_float<T>(mix[e]); });
  }
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mhc_post_res_fwd",
    .name = "baseline_eager",
    .role = Role::baseline,
    .description = "op by op as PyTorch eager: H.float(), F.float(), einsum (bmm), h_post * F, add, cast back "
                   "(6 launches in bf16, 3 in fp32)",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = {},
    .workspace_bytes =
        [](const Shape& s, DType dtype) {
          const auto [tokens, channels] = MhcAxes::of(s);
          const auto tc = static_cast<std::size_t>(tokens) * static_cast<std::size_t>(channels);
          const std::size_t streams = tc * n;
          // mix and post, plus Hf and Ff when the activations are not fp32.
          const std::size_t floats = dtype == DType::fp32 ? 2 * streams : 3 * streams + tc;
          return floats * sizeof(float);
        },
});

}  // namespace
}  // namespace kwb
