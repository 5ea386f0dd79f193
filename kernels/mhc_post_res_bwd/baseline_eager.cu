// mhc_post_res_bwd baseline_eager: the backward of mhc_post_res_fwd's eager graph
//   Hout = (torch.einsum('tij,tjc->tic', R, H.float()) + h_post[..., None] * F.float()[:, None, :]).to(H.dtype)
// as PyTorch autograd runs it, given dHout (bf16; in fp32 the casts are no-ops):
//   ds = dHout.float()                          # 1  ToCopyBackward0 of the final cast
//   Hf = H.float()                              # 2  recompute the bmm's saved input
//   Ff = F.float()                              # 3  recompute the mul's saved input
//   dR = torch.bmm(ds, Hf.transpose(1, 2))      # 4  BmmBackward0 (mat2 side): [T, n, n], dots over C
//   dHf = torch.bmm(R.transpose(1, 2), ds)      # 5  BmmBackward0 (self side): [T, n, C] fp32
//   dH = dHf.to(torch.bfloat16)                 # 6  ToCopyBackward0 of H.float()
//   t1 = ds * Ff[:, None, :]                    # 7  MulBackward0, gradient of h_post[..., None]
//   dh_post = t1.sum(-1)                        # 8  sum_to_size over the broadcast C
//   t2 = ds * h_post[..., None]                 # 9  MulBackward0, gradient of Ff[:, None, :]
//   dFf = t2.sum(1)                             # 10 sum_to_size over the broadcast n
//   dF = dFf.to(torch.bfloat16)                 # 11 ToCopyBackward0 of F.float()
// 11 launches in bf16; 6 in fp32 (4, 5, 7-10, each writing the output directly). AddBackward0
// passes ds to both branches without a launch. Autograd would have saved Hf and Ff from the
// forward (fp32 activation memory); this op's inputs are H and F, so the baseline recomputes
// them, as activation checkpointing does. The bmm launches are an eager row reduction (4, one
// block per (t, i, j)) and an elementwise 4-term dot (5); t1 and t2 share one buffer, as the
// caching allocator would give it back. bf16 65536 x 1024: ~12 GB moved against the fused 1.9 GB.
#include <cstdint>
#include <type_traits>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/eager_ops.cuh"
#include "reference/mhc.hpp"

namespace kwb {
// The eager steps, in launch order (kernel names read eager_map_kernel<cast_dhout_to_f32>, ...).
namespace step {
struct cast_dhout_to_f32;
struct cast_h_to_f32;
struct cast_f_to_f32;
struct bmm_ds_h_transposed;
struct bmm_r_transposed_ds;
struct cast_dh_to_dtype;
struct ds_times_f;
struct dh_post_sum_over_channels;
struct ds_times_h_post;
struct df_sum_over_streams;
struct cast_df_to_dtype;
}  // namespace step

namespace {

constexpr std::int64_t n = kMhcStreams;

template <class T>
void launch_typed(const LaunchArgs& a) {
  constexpr bool kFp32 = std::is_same_v<T, float>;
  const auto [T_, C] = MhcAxes::of(a.shape);
  const std::int64_t streams = T_ * n * C;  // elements of a [T, n, C] tensor
  const T* H = a.tensor<const T>("H");
  const T* F = a.tensor<const T>("F");
  const float* R = a.tensor<const float>("R");
  const float* h_post = a.tensor<const float>("h_post");
  const T* dHout = a.tensor<const T>("dHout");
  T* dH = a.tensor<T>("dH");
  T* dF = a.tensor<T>("dF");
  float* dR = a.tensor<float>("dR");
  float* dh_post = a.tensor<float>("dh_post");

  float* tmp = static_cast<float*>(a.workspace);  // [T, n, C]: t1, then t2
  // fp32: the casts vanish and the fp32 tensors are the op's own.
  const float* ds = reinterpret_cast<const float*>(dHout);
  const float* Hf = reinterpret_cast<const float*>(H);
  const float* Ff = reinterpret_cast<const float*>(F);
  float* dHf = reinterpret_cast<float*>(dH);
  float* dFf = reinterpret_cast<float*>(dF);
  if constexpr (!kFp32) {
    float* ds_ = tmp + streams;  // [T, n, C]
    float* hf = ds_ + streams;   // [T, n, C]
    dHf = hf + streams;          // [T, n, C]
    float* ff = dHf + streams;   // [T, C]
    dFf = ff + T_ * C;           // [T, C]
    eager_map<step::cast_dhout_to_f32>(streams, a.stream, [=] __device__(std::int64_t e) { ds_[e] = to_float(dHout[e]); });  // 1
    eager_map<step::cast_h_to_f32>(streams, a.stream, [=] __device__(std::int64_t e) { hf[e] = to_float(H[e]); });       // 2
    eager_map<step::cast_f_to_f32>(T_ * C, a.stream, [=] __device__(std::int64_t e) { ff[e] = to_float(F[e]); });        // 3
    ds = ds_;
    Hf = hf;
    Ff = ff;
  }
  // 4: row r = (t n + i) n + j of dR is the dot of ds[t, i, :] and Hf[t, j, :].
  eager_row_reduce<step::bmm_ds_h_transposed>(dR, T_ * n * n, C, 1.0f, a.stream, [=] __device__(std::int64_t r, std::int64_t c) {
    const std::int64_t ti = r / n, j = r - ti * n, t = ti / n;
    return ds[ti * C + c] * Hf[(t * n + j) * C + c];
  });
  // 5: e indexes [T, n, C] as (t n + j) C + c; dHf[t, j, c] = sum_i R[t, i, j] ds[t, i, c].
  eager_map<step::bmm_r_transposed_ds>(streams, a.stream, [=] __device__(std::int64_t e) {
    const std::int64_t row = e / C, c = e - row * C, t = row / n, j = row - t * n;
    float v = 0;
    for (std::int64_t i = 0; i < n; ++i) v += R[(t * n + i) * n + j] * ds[(t * n + i) * C + c];
    dHf[e] = v;
  });
  if constexpr (!kFp32) {
    eager_map<step::cast_dh_to_dtype>(streams, a.stream, [=] __device__(std::int64_t e) { dH[e] = from_float<T>(dHf[e]); });  // 6
  }
  // 7, 8: dh_post[t, i] = sum_c ds[t, i, c] Ff[t, c].
  eager_map<step::ds_times_f>(streams, a.stream, [=] __device__(std::int64_t e) {
    const std::int64_t row = e / C, c = e - row * C, t = row / n;
    tmp[e] = ds[e] * Ff[t * C + c];
  });
  eager_row_sum<step::dh_post_sum_over_channels>(tmp, dh_post, T_ * n, C, a.stream);
  // 9, 10: dFf[t, c] = sum_i ds[t, i, c] h_post[t, i].
  eager_map<step::ds_times_h_post>(streams, a.stream, [=] __device__(std::int64_t e) { tmp[e] = ds[e] * h_post[e / C]; });
  eager_map<step::df_sum_over_streams>(T_ * C, a.stream, [=] __device__(std::int64_t e) {
    const std::int64_t t = e / C, c = e - t * C;
    float v = 0;
    for (std::int64_t i = 0; i < n; ++i) v += tmp[(t * n + i) * C + c];
    dFf[e] = v;
  });
  if constexpr (!kFp32) {
    eager_map<step::cast_df_to_dtype>(T_ * C, a.stream, [=] __device__(std::int64_t e) { dF[e] = from_float<T>(dFf[e]); });  // 11
  }
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mhc_post_res_bwd",
    .name = "baseline_eager",
    .role = Role::baseline,
    .description = "op by op as PyTorch autograd: casts, bmm backward (dR, dH), mul backward + sum_to_size "
                   "(dh_post, dF), casts back (11 launches in bf16, 6 in fp32)",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse = [](const Shape& s, DType) -> std::optional<std::string> {
      // eager_row_reduce puts one (t, i, j) row in each block of a 1-D grid.
      if (MhcAxes::of(s).tokens * n * n > 2147483647) return "T n^2 rows beyond the grid's x dimension";
      return std::nullopt;
    },
    .workspace_bytes =
        [](const Shape& s, DType dtype) {
          const auto [tokens, channels] = MhcAxes::of(s);
          const auto tc = static_cast<std::size_t>(tokens) * static_cast<std::size_t>(channels);
          const std::size_t streams = tc * n;
          // tmp; plus ds, Hf, dHf and Ff, dFf when the activations are not fp32.
          const std::size_t floats = dtype == DType::fp32 ? streams : 4 * streams + 2 * tc;
          return floats * sizeof(float);
        },
});

}  // namespace
}  // namespace kwb
