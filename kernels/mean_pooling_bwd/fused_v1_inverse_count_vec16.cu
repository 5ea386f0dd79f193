// mean_pooling_bwd fused_v1_inverse_count_vec16: dx written once, in 16-byte packs.
//
// A first kernel counts each sequence's real tokens (one block a sequence, seq bytes of mask) and
// leaves 1 / max(n, 1) in fp32; the second writes dx = mask ? dy * inv : 0, a block a token row at
// a time over a grid-stride loop, in packs (dy, b x d elements, stays in the L2, so dx's writes are
// the DRAM traffic). A
// hidden size that is no multiple of the pack width takes single-element accesses.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/block_reduce.cuh"
#include "kernels/common/multiprocessors.hpp"
#include "kernels/common/vector_pack.cuh"
#include "reference/mean_pooling.hpp"

namespace kwb {
namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) inverse_counts(const bool* __restrict__ mask, float* __restrict__ inv,
                                                            std::int64_t seq) {
  __shared__ float scratch[32];
  const std::int64_t b = blockIdx.x;
  float n = 0;
  for (std::int64_t s = threadIdx.x; s < seq; s += kThreads) n += mask[b * seq + s] ? 1.0f : 0.0f;
  n = block_sum(n, scratch);
  if (threadIdx.x == 0) inv[b] = 1.0f / fmaxf(n, 1.0f);
}

// A block takes whole token rows (grid-stride over them; several rows at once where a row has fewer
// packs than the block has threads): a row's sequence and mask byte are read once, and its threads
// write the row's packs, so no pack pays a 64-bit division.
template <class T, int E>
__global__ void __launch_bounds__(kThreads)
    spread_gradient(const T* __restrict__ dy, const bool* __restrict__ mask, const float* __restrict__ inv,
                    T* __restrict__ dx, std::int64_t tokens, std::int64_t seq, std::int64_t hidden) {
  const std::int64_t packs_per_row = hidden / E;
  const int rows_per_step = packs_per_row >= kThreads ? 1 : kThreads / static_cast<int>(packs_per_row);
  const int row_in_step = packs_per_row >= kThreads ? 0 : static_cast<int>(threadIdx.x / packs_per_row);
  if (row_in_step >= rows_per_step) return;  // threads past the last whole row of a step
  const std::int64_t first_pack = packs_per_row >= kThreads ? threadIdx.x : threadIdx.x % packs_per_row;
  const std::int64_t pack_stride = packs_per_row >= kThreads ? kThreads : packs_per_row;
  for (std::int64_t token = std::int64_t{blockIdx.x} * rows_per_step + row_in_step; token < tokens;
       token += std::int64_t{gridDim.x} * rows_per_step) {
    const std::int64_t b = token / seq;
    const bool kept = mask[token];
    const float scale = kept ? inv[b] : 0.0f;
    const T* g = dy + b * hidden;
    T* out = dx + token * hidden;
    for (std::int64_t k = first_pack; k < packs_per_row; k += pack_stride) {
      Pack<T, E> v;
      if (kept) {
        v = *reinterpret_cast<const Pack<T, E>*>(g + k * E);
#pragma unroll
        for (int e = 0; e < E; ++e) v.v[e] = from_float<T>(to_float(v.v[e]) * scale);
      } else {
#pragma unroll
        for (int e = 0; e < E; ++e) v.v[e] = from_float<T>(0.0f);
      }
      *reinterpret_cast<Pack<T, E>*>(out + k * E) = v;
    }
  }
}

template <class T, int E>
void spread(const LaunchArgs& a, const PoolingAxes& p, const float* inv) {
  const std::int64_t tokens = p.batch * p.seq;
  // At most eight blocks a multiprocessor (a full one at 256 threads): the loop covers the rest.
  const std::int64_t blocks = std::min<std::int64_t>(tokens, 8 * std::int64_t{multiprocessor_count()});
  spread_gradient<T, E><<<static_cast<unsigned>(std::max<std::int64_t>(blocks, 1)), kThreads, 0, a.stream>>>(
      a.tensor<const T>("dy"), a.tensor<const bool>("mask"), inv, a.tensor<T>("dx"), tokens, p.seq, p.hidden);
}

template <class T>
void launch_typed(const LaunchArgs& a) {
  const PoolingAxes p = PoolingAxes::of(a.shape);
  float* inv = static_cast<float*>(a.workspace);
  inverse_counts<<<static_cast<unsigned>(p.batch), kThreads, 0, a.stream>>>(a.tensor<const bool>("mask"), inv, p.seq);
  constexpr int kPack = 16 / sizeof(T);
  if (p.hidden % kPack == 0)
    spread<T, kPack>(a, p, inv);
  else
    spread<T, 1>(a, p, inv);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mean_pooling_bwd",
    .name = "fused_v1_inverse_count_vec16",
    .role = Role::fused,
    .description = "one small kernel for 1 / max(n, 1) per sequence, then dx = mask ? dy * inv : 0 written once "
                   "in 16-byte packs",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch_typed<T>(a); }),
    .refuse =
        [](const Shape& s, DType) -> std::optional<std::string> {
          if (s.at("batch") > 2147483647) return "batch above 2^31-1 exceeds the grid's x dimension";
          return std::nullopt;
        },
    .workspace_bytes = [](const Shape& s, DType) { return static_cast<std::size_t>(s.at("batch")) * sizeof(float); },
});

}  // namespace
}  // namespace kwb
