#include "reference/attention_bwd_inputs_gpu.hpp"

#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "harness/catalogue/cuda_check.hpp"
#include "harness/catalogue/device_types.cuh"
#include "reference/attention.hpp"

namespace kwb::ref {
namespace {

constexpr int kWarpsPerBlock = 4;
constexpr int kMaxPerLane = 4;  // head_dim <= 128

struct ForwardDims {
  std::int64_t batch, seq, heads, kv_heads, head_dim, window;
  bool causal;
  float softcap, scale;
};

__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Row r = (b * seq + i) * heads + h of O (bshd); lse at (b * heads + h) * seq + i.
template <class T>
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    forward_rows(const T* q, const T* k, const T* v, T* o, float* lse, ForwardDims p) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= p.batch * p.seq * p.heads) return;
  const std::int64_t h = row % p.heads, i = (row / p.heads) % p.seq, b = row / (p.heads * p.seq);
  const std::int64_t kvh = h / (p.heads / p.kv_heads), d = p.head_dim;
  const std::int64_t kv_stride = p.kv_heads * d;
  const T* kb = k + (b * p.seq * p.kv_heads + kvh) * d;
  const T* vb = v + (b * p.seq * p.kv_heads + kvh) * d;
  float qv[kMaxPerLane], acc[kMaxPerLane];
  for (int t = 0; t < kMaxPerLane; ++t) {
    const std::int64_t e = lane + 32 * t;
    qv[t] = e < d ? to_float(q[row * d + e]) : 0.0f;
    acc[t] = 0;
  }
  // The same visible keys as AttentionMask (reference/attention.hpp).
  const std::int64_t lo = p.window > 0 && i - p.window + 1 > 0 ? i - p.window + 1 : 0;
  std::int64_t hi = p.causal ? i + 1 : (p.window > 0 ? i + p.window : p.seq);
  if (hi > p.seq) hi = p.seq;
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
  if (lane == 0) lse[(b * p.heads + h) * p.seq + i] = m + logf(sum);
}

}  // namespace

void attention_bwd_derive_inputs(const LaunchArgs& a) {
  const auto axes = AttentionAxes::of(a.shape);
  if (axes.head_dim > 32 * kMaxPerLane) throw std::invalid_argument("attention_bwd's inputs: head_dim above 128");
  const ForwardDims p{axes.batch,  axes.seq,    axes.heads, axes.kv_heads, axes.head_dim, axes.window, axes.causal,
                      static_cast<float>(axes.softcap), 1.0f / std::sqrt(static_cast<float>(axes.head_dim))};
  const std::int64_t rows = p.batch * p.seq * p.heads;
  if (rows == 0) return;
  const unsigned blocks = static_cast<unsigned>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
  dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    forward_rows<T><<<blocks, kWarpsPerBlock * 32, 0, a.stream>>>(
        a.tensor<const T>("q"), a.tensor<const T>("k"), a.tensor<const T>("v"), a.tensor<T>("o"), a.tensor<float>("lse"), p);
  });
  cuda_check(cudaGetLastError(), "attention_bwd's inputs (the forward's O and lse)");
}

}  // namespace kwb::ref
