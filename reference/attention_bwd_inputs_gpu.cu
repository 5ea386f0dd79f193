#include "reference/attention_bwd_inputs_gpu.hpp"

#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/device_types.cuh"
#include "reference/attention.hpp"
#include "reference/attention_varlen.hpp"
#include "reference/attention_varlen_offsets_gpu.hpp"

namespace kwb::ref {
namespace {

constexpr int kWarpsPerBlock = 4;
constexpr int kMaxPerLane = 4;  // head_dim <= 128

struct ForwardDims {
  std::int64_t batch, seq, heads, kv_heads, head_dim, window;
  bool causal;
  float softcap, scale;
  // Packed sequences (attention_varlen_bwd): offsets [batch + 1] of `total` tokens; null: dense.
  const std::int32_t* cu_seqlens = nullptr;
  std::int64_t total = 0;
};

// The sequence of packed token t: the last b with cu_seqlens[b] <= t (empty sequences share their
// start with the next one, which holds t).
__device__ std::int64_t sequence_of(const std::int32_t* cu_seqlens, std::int64_t batch, std::int64_t t) {
  std::int64_t lo = 0, hi = batch;  // cu_seqlens[lo] <= t < cu_seqlens[hi]
  while (hi - lo > 1) {
    const std::int64_t mid = (lo + hi) / 2;
    if (cu_seqlens[mid] <= t) lo = mid;
    else hi = mid;
  }
  return lo;
}

__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Row r = token * heads + h of O, token = b * seq + i (bshd) or the packed token; lse at
// (b * heads + h) * seq + i, or h * total + token packed.
template <class T>
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    forward_rows(const T* q, const T* k, const T* v, T* o, float* lse, ForwardDims p) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const std::int64_t tokens = p.cu_seqlens ? p.total : p.batch * p.seq;
  if (row >= tokens * p.heads) return;
  const std::int64_t h = row % p.heads, token = row / p.heads;
  // The row's sequence: its first token, its length (the mask's seq) and the query's place in it.
  std::int64_t start, seq, lse_at;
  if (p.cu_seqlens) {
    const std::int64_t b = sequence_of(p.cu_seqlens, p.batch, token);
    start = p.cu_seqlens[b];
    seq = p.cu_seqlens[b + 1] - start;
    lse_at = h * p.total + token;
  } else {
    const std::int64_t b = token / p.seq;
    start = b * p.seq;
    seq = p.seq;
    lse_at = (b * p.heads + h) * p.seq + token - start;
  }
  const std::int64_t i = token - start;
  const std::int64_t kvh = h / (p.heads / p.kv_heads), d = p.head_dim;
  const std::int64_t kv_stride = p.kv_heads * d;
  const T* kb = k + (start * p.kv_heads + kvh) * d;
  const T* vb = v + (start * p.kv_heads + kvh) * d;
  float qv[kMaxPerLane], acc[kMaxPerLane];
  for (int t = 0; t < kMaxPerLane; ++t) {
    const std::int64_t e = lane + 32 * t;
    qv[t] = e < d ? to_float(q[row * d + e]) : 0.0f;
    acc[t] = 0;
  }
  // The same visible keys as AttentionMask (reference/attention.hpp).
  const std::int64_t lo = p.window > 0 && i - p.window + 1 > 0 ? i - p.window + 1 : 0;
  std::int64_t hi = p.causal ? i + 1 : (p.window > 0 ? i + p.window : seq);
  if (hi > seq) hi = seq;
  float m = -INFINITY, sum = 0;
  for (std::int64_t j = lo; j < hi; ++j) {
    float dot = 0;
    for (int t = 0; t < kMaxPerLane; ++t) {
      const std::int64_t e = lane + 32 * t;
      if (e < d) dot += qv[t] * to_float(kb[j * kv_stride + e]);
    }
    float l = warp_sum(dot) * p.scale;
    if (p.softcap > 0) l = p.softcap * tanhf(l / p.softcap);
    const float m_new = fmaxf(m, l);
    const float rescale = expf(m - m_new), w = expf(l - m_new);
    sum = sum * rescale + w;
    for (int t = 0; t < kMaxPerLane; ++t) {
      const std::int64_t e = lane + 32 * t;
      acc[t] = acc[t] * rescale + (e < d ? w * to_float(vb[j * kv_stride + e]) : 0.0f);
    }
    m = m_new;
  }
  for (int t = 0; t < kMaxPerLane; ++t) {
    const std::int64_t e = lane + 32 * t;
    if (e < d) o[row * d + e] = from_float<T>(acc[t] / sum);
  }
  if (lane == 0) lse[lse_at] = m + logf(sum);
}

// O and lse of every row of q (tokens * heads of them).
void forward(const LaunchArgs& a, const AttentionAxes& axes, const std::int32_t* cu_seqlens, std::int64_t tokens) {
  if (axes.head_dim > 32 * kMaxPerLane) throw std::invalid_argument("attention_bwd's inputs: head_dim above 128");
  const ForwardDims p{axes.batch,       axes.seq,    axes.heads,
                      axes.kv_heads,    axes.head_dim, axes.window,
                      axes.causal,      static_cast<float>(axes.softcap),
                      1.0f / std::sqrt(static_cast<float>(axes.head_dim)), cu_seqlens,
                      cu_seqlens ? tokens : 0};
  const std::int64_t rows = tokens * p.heads;
  if (rows == 0) return;
  const unsigned blocks = static_cast<unsigned>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
  dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    forward_rows<T><<<blocks, kWarpsPerBlock * 32, 0, a.stream>>>(
        a.tensor<const T>("q"), a.tensor<const T>("k"), a.tensor<const T>("v"), a.tensor<T>("o"), a.tensor<float>("lse"), p);
  });
  cuda_check(cudaGetLastError(), "attention_bwd's inputs (the forward's O and lse)");
}

}  // namespace

void attention_bwd_derive_inputs(const LaunchArgs& a) {
  const auto axes = AttentionAxes::of(a.shape);
  forward(a, axes, nullptr, axes.batch * axes.seq);
}

void attention_varlen_bwd_derive_inputs(const LaunchArgs& a) {
  attention_varlen_derive_offsets(a);  // cu_seqlens first, on the same stream
  const auto v = varlen::VarlenAxes::of(a.shape);
  forward(a, v.attention, a.tensor<const std::int32_t>("cu_seqlens"), v.total());
}

}  // namespace kwb::ref
