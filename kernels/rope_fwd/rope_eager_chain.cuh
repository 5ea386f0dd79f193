// The eager chain of rotate-half RoPE, one framework op per launch (kernels/common/eager_ops.cuh),
// shared by the rope_fwd and rope_bwd baselines. What it runs, in PyTorch:
//
//   cos_f = torch.cat([cos, cos], -1)                 # [rows, D] fp32 (HF: cat(freqs, freqs))
//   sin_f = torch.cat([sin, sin], -1)
//   # positions=ids only (2 launches more):
//   cos_f = cos_f[position_ids]; sin_f = sin_f[position_ids]         # [batch, seq, D]
//   for x in (q, k):                                                 # (dq_out, dk_out)
//       xf = x.float()                                               # not in fp32
//       x1, x2 = xf[..., :D//2], xf[..., D//2:]                      # views, no launch
//       rot = torch.cat([-x2, x1], -1)      # forward: neg, cat
//       rot = torch.cat([x2, -x1], -1)      # backward (rotate_half transposed): neg, cat
//       y = (xf * cos_f[..., None, :] + rot * sin_f[..., None, :]).to(x.dtype)  # mul, mul, add, cast
//
// bf16/fp16: 2 + 2 * 7 = 16 launches (18 with position ids); fp32: 12 (14). The arithmetic runs
// in fp32, as the fused kernel does: a chain of bf16 multiplies and adds would round three
// times and miss the bf16 tolerance where the two products nearly cancel. The backward is
// written as the transposed rotation by hand; autograd through the forward chain would launch
// more (slice backward fills and copies), so this count is a floor for the eager backward.
#pragma once

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "harness/catalogue/device_types.cuh"
#include "harness/catalogue/registry.hpp"
#include "kernels/common/eager_ops.cuh"
#include "reference/rope.hpp"

// The eager steps, in launch order (kernel names read eager_map_kernel<cat_cos_table>, ...).
namespace kwb::step {
struct cat_cos_table;
struct cat_sin_table;
struct gather_cos_by_position_ids;
struct gather_sin_by_position_ids;
struct cast_x_to_f32;
struct neg_half;         // -x2 (forward) or -x1 (backward)
struct cat_rotate_half;  // cat(-x2, x1) (forward) or cat(x2, -x1) (backward)
struct times_cos;
struct rot_times_sin;
struct x_cos_plus_rot_sin;
struct cast_y_to_dtype;
}  // namespace kwb::step

namespace kwb::rope {

// The case's axes under the name the chain's kernels carry (eager_rotate_tensor takes it, and a
// device lambda's kernel is named after its enclosing function): rope::Axes, read once.
struct ChainDims : Axes {
  explicit ChainDims(const Axes& axes) : Axes(axes) {}
};

// The broadcast table element of element i: [batch, seq, 1, D] tables (index: [seq, D]) against
// [batch, seq, heads, D].
struct TableIndex {
  std::int64_t token_elements, dim, seq;
  bool ids;
  __device__ std::int64_t operator()(std::int64_t i) const {
    const std::int64_t token = i / token_elements, c = i % dim;
    return (ids ? token : token % seq) * dim + c;
  }
};

// fp32 intermediates: the full-width tables, their gathered rows (ids), and per tensor xf,
// the negated half, rot, the two products and their sum (q is the largest: heads >= kv_heads).
inline std::size_t eager_chain_workspace_bytes(const Shape& s, DType) {
  const ChainDims n(Axes::of(s));
  const std::int64_t tables = 2 * n.table_rows() * n.head_dim + (n.ids ? 2 * n.tokens() * n.head_dim : 0);
  const std::int64_t per_tensor = n.tokens() * n.heads * n.head_dim;
  return static_cast<std::size_t>(tables + per_tensor / 2 + 5 * per_tensor) * sizeof(float);
}

struct ChainWorkspace {
  float *cos_f, *sin_f, *cos_g, *sin_g, *xf, *neg, *rot, *m1, *m2, *sum;
};

inline ChainWorkspace carve_chain(void* base, const ChainDims& n) {
  float* f = static_cast<float*>(base);
  const std::int64_t per_tensor = n.tokens() * n.heads * n.head_dim;
  ChainWorkspace w{};
  w.cos_f = f;
  w.sin_f = w.cos_f + n.table_rows() * n.head_dim;
  w.cos_g = w.sin_f + n.table_rows() * n.head_dim;
  w.sin_g = w.cos_g + (n.ids ? n.tokens() * n.head_dim : 0);
  w.xf = w.sin_g + (n.ids ? n.tokens() * n.head_dim : 0);
  w.neg = w.xf + per_tensor;
  w.rot = w.neg + per_tensor / 2;
  w.m1 = w.rot + per_tensor;
  w.m2 = w.m1 + per_tensor;
  w.sum = w.m2 + per_tensor;
  return w;
}

// One tensor (q or k, heads = its head count) through neg, cat, mul, mul, add (and the casts).
// `cos_t`/`sin_t` hold one D-wide row per position (index) or per token (ids).
template <class T, bool kBackward>
void eager_rotate_tensor(const T* x, T* y, std::int64_t heads, const ChainDims& n, const float* cos_t,
                         const float* sin_t, const ChainWorkspace& ws, cudaStream_t stream) {
  constexpr bool is_fp32 = std::is_same_v<T, float>;
  const std::int64_t count = n.tokens() * heads * n.head_dim, dim = n.head_dim, half = n.half(), seq = n.seq;
  const bool ids = n.ids;
  const float* xf = reinterpret_cast<const float*>(x);
  if constexpr (!is_fp32) {
    float* out = ws.xf;
    eager_map<step::cast_x_to_f32>(count, stream, [=] __device__(std::int64_t i) { out[i] = to_float(x[i]); });
    xf = ws.xf;
  }
  // neg: -x2 (forward) or -x1 (backward), contiguous [..., D/2].
  float* neg = ws.neg;
  const std::int64_t negated_half = kBackward ? 0 : half;
  eager_map<step::neg_half>(count / 2, stream, [=] __device__(std::int64_t i) {
    const std::int64_t row = i / half, c = i - row * half;
    neg[i] = -xf[row * dim + negated_half + c];
  });
  // cat: [neg, x1] (forward) or [x2, neg] (backward).
  float* rot = ws.rot;
  eager_map<step::cat_rotate_half>(count, stream, [=] __device__(std::int64_t i) {
    const std::int64_t row = i / dim, c = i - row * dim;
    const bool first = c < half;
    if (kBackward)
      rot[i] = first ? xf[row * dim + half + c] : neg[row * half + c - half];
    else
      rot[i] = first ? neg[row * half + c] : xf[row * dim + c - half];
  });
  const TableIndex table_index{heads * dim, dim, seq, ids};
  float* m1 = ws.m1;
  eager_map<step::times_cos>(count, stream, [=] __device__(std::int64_t i) { m1[i] = xf[i] * cos_t[table_index(i)]; });
  float* m2 = ws.m2;
  eager_map<step::rot_times_sin>(count, stream, [=] __device__(std::int64_t i) { m2[i] = rot[i] * sin_t[table_index(i)]; });
  float* sum = is_fp32 ? reinterpret_cast<float*>(y) : ws.sum;
  eager_map<step::x_cos_plus_rot_sin>(count, stream, [=] __device__(std::int64_t i) { sum[i] = m1[i] + m2[i]; });
  if constexpr (!is_fp32) {
    const float* s = ws.sum;
    eager_map<step::cast_y_to_dtype>(count, stream, [=] __device__(std::int64_t i) { y[i] = from_float<T>(s[i]); });
  }
}

template <class T, bool kBackward>
void eager_chain(const LaunchArgs& a) {
  const ChainDims n(Axes::of(a.shape));
  const ChainWorkspace ws = carve_chain(a.workspace, n);
  const std::int64_t dim = n.head_dim, half = n.half(), rows = n.table_rows();
  const Rotation& rotation = kBackward ? kBackwardRotation : kForwardRotation;
  const auto* cos = a.tensor<const float>("cos");
  const auto* sin = a.tensor<const float>("sin");
  float* cos_f = ws.cos_f;
  float* sin_f = ws.sin_f;
  eager_map<step::cat_cos_table>(rows * dim, a.stream, [=] __device__(std::int64_t i) {
    const std::int64_t r = i / dim, c = i - r * dim;
    cos_f[i] = cos[r * half + (c < half ? c : c - half)];
  });
  eager_map<step::cat_sin_table>(rows * dim, a.stream, [=] __device__(std::int64_t i) {
    const std::int64_t r = i / dim, c = i - r * dim;
    sin_f[i] = sin[r * half + (c < half ? c : c - half)];
  });
  const float* cos_t = ws.cos_f;
  const float* sin_t = ws.sin_f;
  if (n.ids) {
    // An index gather, one launch per table; an id outside the table gives NaN (PyTorch would
    // raise a device-side assert).
    const auto* pos = a.tensor<const std::int64_t>("position_ids");
    float* cos_g = ws.cos_g;
    float* sin_g = ws.sin_g;
    eager_map<step::gather_cos_by_position_ids>(n.tokens() * dim, a.stream, [=] __device__(std::int64_t i) {
      const std::int64_t t = i / dim, p = pos[t];
      cos_g[i] = p >= 0 && p < rows ? cos_f[p * dim + i - t * dim] : NAN;
    });
    eager_map<step::gather_sin_by_position_ids>(n.tokens() * dim, a.stream, [=] __device__(std::int64_t i) {
      const std::int64_t t = i / dim, p = pos[t];
      sin_g[i] = p >= 0 && p < rows ? sin_f[p * dim + i - t * dim] : NAN;
    });
    cos_t = ws.cos_g;
    sin_t = ws.sin_g;
  }
  eager_rotate_tensor<T, kBackward>(a.tensor<const T>(rotation.q), a.tensor<T>(rotation.q_out), n.heads, n, cos_t,
                                    sin_t, ws, a.stream);
  eager_rotate_tensor<T, kBackward>(a.tensor<const T>(rotation.k), a.tensor<T>(rotation.k_out), n.kv_heads, n, cos_t,
                                    sin_t, ws, a.stream);
}

// Both directions, every dtype: defined in rope_eager_chain.cu, so that the chain's kernels are
// compiled once for the forward's and the backward's baselines.
void launch_eager_chain(const LaunchArgs& a, bool backward);

}  // namespace kwb::rope
