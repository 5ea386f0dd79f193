// cross_entropy fused_v2_row_per_block_two_pass: one CTA streams its row twice, any vocabulary,
// no clusters; the second read is meant to hit L2.
//
// The simple fused form, beside v1's cluster: pass 1 streams the row with 16-byte loads (four
// vectors in flight per thread) keeping an online max and sum of exp(x - max) per thread, then
// one block reduction gives the row's max M and sum S; pass 2 streams the row again and writes
// dlogits = exp(x - M) / (S n_valid) - onehot(label) / n_valid. No probabilities are stored and
// the state per thread is two floats, so any vocabulary runs the same way (2 CTAs of 512
// threads per SM, 4 vectors in flight per thread: 64 KB per SM).
//
// Napkin math: from DRAM the second read would make three streams (read, read, write) instead of
// two: at most 2/3 of the copy ceiling on the op's byte count. But the row was read microseconds
// before: with ~264 rows in flight on an H100 (2 per SM x 132) the working set is 264 x 250 KB =
// 66 MB at 128256 bf16, beyond the 50 MB L2, so part of the re-read comes from DRAM; at 32000
// (64 KB rows, 17 MB) it should all hit. Expected: ~65-75% of copy at 128256 bf16, ~85% at 32000.
// v1 should beat it where its row fits the cluster's registers; this one covers every vocabulary
// and shows what the cluster buys. Same three launches and workspace as v1: count the valid
// labels, the row kernel, the mean of the row losses; workspace 4 * (tokens + 1) bytes.
#include <algorithm>
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/block_reduce.cuh"
#include "kernels/common/vector_pack.cuh"
#include "reference/cross_entropy.hpp"

namespace kwb {
namespace {

constexpr float kLog2e = 1.4426950408889634f;
constexpr int kUnroll = 4;  // 16-byte loads in flight per thread per step
constexpr int kMaxThreads = 512;  // 2 CTAs per SM at <= 64 registers

__global__ void count_valid_kernel(const int* labels, std::int64_t tokens, std::int64_t vocab, float* n_valid) {
  __shared__ float scratch[32];
  float count = 0;
  for (std::int64_t r = threadIdx.x; r < tokens; r += blockDim.x)
    count += cross_entropy_label_counts(labels[r], vocab) ? 1.0f : 0.0f;
  count = block_sum(count, scratch);
  if (threadIdx.x == 0) *n_valid = count;
}

__global__ void mean_loss_kernel(const float* row_loss, std::int64_t tokens, const float* n_valid, float* loss) {
  __shared__ float scratch[32];
  float sum = 0;
  for (std::int64_t r = threadIdx.x; r < tokens; r += blockDim.x) sum += row_loss[r];
  sum = block_sum(sum, scratch);
  if (threadIdx.x == 0) *loss = *n_valid > 0 ? sum / *n_valid : 0.0f;
}

// Folds value x into the running (m, s) = (max, sum of exp(x_i - m)).
__device__ __forceinline__ void online_add(float& m, float& s, float x) {
  if (x > m) {
    s = s * exp2f((m - x) * kLog2e) + 1.0f;  // m = -inf at first: s = 0 * 0 + 1
    m = x;
  } else {
    s += exp2f((x - m) * kLog2e);
  }
}

template <class T>
__global__ void __launch_bounds__(kMaxThreads, 2)
xent_two_pass_kernel(const T* __restrict__ logits, const int* __restrict__ labels, T* __restrict__ dlogits,
                     float* __restrict__ row_loss, const float* __restrict__ n_valid, int vocab) {
  constexpr int E = 16 / sizeof(T);
  using P = Pack<T, E>;
  __shared__ float scratch[32];
  const std::int64_t row = blockIdx.x;
  const T* xr = logits + row * vocab;
  T* gr = dlogits + row * vocab;
  const int label = labels[row];
  const int tid = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);

  // Row layout: [head | body of nvec 16-byte vectors | tail], head and tail one scalar per thread.
  const int misalign = static_cast<int>(reinterpret_cast<std::uintptr_t>(xr) & 15) / static_cast<int>(sizeof(T));
  const int head = min(vocab, misalign == 0 ? 0 : E - misalign);
  const int nvec = (vocab - head) / E;
  const int tail_start = head + nvec * E;
  const int edge_count = head + (vocab - tail_start);
  const int edge_col = tid < head ? tid : tail_start + (tid - head);
  const bool has_edge = tid < edge_count;
  const P* xb = reinterpret_cast<const P*>(xr + head);
  P* gb = reinterpret_cast<P*>(gr + head);

  if (!cross_entropy_label_counts(label, vocab)) {
    P zero;
#pragma unroll
    for (int e = 0; e < E; ++e) zero.v[e] = from_float<T>(0.0f);
    for (int idx = tid; idx < nvec; idx += threads) gb[idx] = zero;
    if (has_edge) gr[edge_col] = from_float<T>(0.0f);
    if (tid == 0) row_loss[row] = 0.0f;
    return;
  }

  // Pass 1: online max and sum, kUnroll vectors loaded before any is used.
  float m = -INFINITY, s = 0;
  if (has_edge) online_add(m, s, to_float(xr[edge_col]));
  for (int base = tid; base < nvec; base += kUnroll * threads) {
    P v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (base + u * threads < nvec) v[u] = xb[base + u * threads];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (base + u * threads < nvec) {
        float vm = -INFINITY;
#pragma unroll
        for (int e = 0; e < E; ++e) vm = fmaxf(vm, to_float(v[u].v[e]));
        if (vm > m) {
          s *= exp2f((m - vm) * kLog2e);
          m = vm;
        }
        const float m_l2 = m * kLog2e;
#pragma unroll
        for (int e = 0; e < E; ++e) s += exp2f(fmaf(to_float(v[u].v[e]), kLog2e, -m_l2));
      }
    }
  }
  const float row_max = block_max(m, scratch);
  const float row_sum = block_sum(m > -INFINITY ? s * exp2f((m - row_max) * kLog2e) : 0.0f, scratch);
  const float inv_n = 1.0f / *n_valid;  // >= 1 valid row: this one
  if (tid == 0) row_loss[row] = row_max + logf(row_sum) - to_float(xr[label]);

  // Pass 2: the row again (from L2 where it stayed), and the gradient.
  const float scale = inv_n / row_sum;
  const float max_l2 = row_max * kLog2e;
  if (has_edge)
    gr[edge_col] = from_float<T>(exp2f(fmaf(to_float(xr[edge_col]), kLog2e, -max_l2)) * scale -
                                 (edge_col == label ? inv_n : 0.0f));
  for (int base = tid; base < nvec; base += kUnroll * threads) {
    P v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (base + u * threads < nvec) v[u] = xb[base + u * threads];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int idx = base + u * threads;
      if (idx < nvec) {
        const int col0 = head + idx * E;
        P out;
#pragma unroll
        for (int e = 0; e < E; ++e) {
          const float p = exp2f(fmaf(to_float(v[u].v[e]), kLog2e, -max_l2)) * scale;
          out.v[e] = from_float<T>(col0 + e == label ? p - inv_n : p);
        }
        gb[idx] = out;
      }
    }
  }
}

// 512 threads for long rows, fewer for short ones (at least 32, and enough for head and tail).
int threads_for(std::int64_t vocab, std::size_t elem_bytes) {
  const std::int64_t nvec = vocab / (16 / static_cast<std::int64_t>(elem_bytes));
  const std::int64_t wanted = (nvec + kUnroll - 1) / kUnroll;
  return static_cast<int>(std::clamp<std::int64_t>((wanted + 31) / 32 * 32, 32, kMaxThreads));
}

std::size_t workspace_bytes(const Shape& s, DType) {
  return (static_cast<std::size_t>(CrossEntropyAxes::of(s).tokens) + 1) * sizeof(float);
}

template <class T>
void launch(const LaunchArgs& a) {
  const auto [tokens, vocab] = CrossEntropyAxes::of(a.shape);
  float* row_loss = static_cast<float*>(a.workspace);
  float* n_valid = row_loss + tokens;
  const auto* labels = a.tensor<const std::int32_t>("labels");
  count_valid_kernel<<<1, 1024, 0, a.stream>>>(labels, tokens, vocab, n_valid);
  xent_two_pass_kernel<T><<<static_cast<unsigned>(tokens), threads_for(vocab, sizeof(T)), 0, a.stream>>>(
      a.tensor<const T>("logits"), labels, a.tensor<T>("dlogits"), row_loss, n_valid, static_cast<int>(vocab));
  mean_loss_kernel<<<1, 1024, 0, a.stream>>>(row_loss, tokens, n_valid, a.tensor<float>("loss"));
}

KWB_REGISTER_VARIANT(Variant{
    .op = "cross_entropy",
    .name = "fused_v2_row_per_block_two_pass",
    .role = Role::fused,
    .description = "one CTA per row, online max/sum then a second read (from L2 where it stayed) for the "
                   "gradient: any vocab, no clusters",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = [](const Shape& s, DType) { return refuse_rows_beyond_grid(CrossEntropyAxes::of(s).tokens); },
    .workspace_bytes = workspace_bytes,
});

}  // namespace
}  // namespace kwb
