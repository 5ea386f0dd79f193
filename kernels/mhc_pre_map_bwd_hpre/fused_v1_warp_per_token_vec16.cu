// mhc_pre_map_bwd_hpre fused_v1_warp_per_token_vec16: dh_pre[t, i] = sum_c H[t, i, c] * dX[t, c]
// in one pass: H and dX read once, 4 floats written per token, no [T, n, C] fp32 product.
//
// One warp per group of K consecutive tokens. Each lane strides over the 16-byte packs of the
// rows (lane, lane + 32, ...): per step it loads K packs of dX and K x 4 packs of H (all loads
// before any math; each warp load covers 512 contiguous bytes of one row), converts dX once and
// accumulates 4 K fp32 fma chains. Then each of the 4 K partial sums is reduced across the warp
// by an xor butterfly (warp_sum) and lane 0 writes the token's 4 values: a fixed order, so
// results are deterministic (no atomics, no shared memory, no block barrier). C not a multiple
// of the pack or misaligned pointers: the same kernel with 1-element packs
// (kernels/mhc_pre_map_fwd/pre_map_common.cuh).
//
// Napkin math, bf16 65536 x 1024: read H 537 MB + dX 134 MB, write dh_pre 1 MB = 672 MB; at
// ~3000 GB/s (H100 copy ceiling) 224 us. A pure read stream (writes are 0.2%), which on H100 runs
// at or a little above the copy ceiling. K = 2 (default): 10 packs (160 bytes) + 8 accumulators
// per lane; ptxas gives 110 registers in bf16 (64 at K = 1, 64 in fp32), 2 blocks of 256 threads
// per SM: 512 lanes x 160 bytes = 80 KB of loads in flight per SM (~5x Little's law). K = 4
// would pass the 128 registers of 512-thread blocks and spill, so it is not offered. C = 1024 bf16: 128 packs per row, 4
// steps per lane. Rounding: each lane sums C / 32 products in order, then 5 butterfly levels, so
// the error grows far slower than the C-term bound the tolerance allows. Expected: >= 90% of copy
// (~245 us); the baseline moves 5x the bytes in bf16, 2.6x in fp32.
#include <cstdint>
#include <stdexcept>

#include "kernels/common/block_reduce.cuh"
#include "kernels/mhc_pre_map_fwd/pre_map_common.cuh"

namespace kwb {
namespace {

constexpr int n = kPreMapStreams;

// groups = ceil(tokens / K); row_packs = C / E packs per row of C channels. blockDim.x is a
// multiple of 32, and a warp's loop trip counts depend on its warp index only, so every lane
// reaches warp_sum together.
template <class T, int E, int K>
__global__ void __launch_bounds__(kPreMapMaxThreads)
pre_map_bwd_hpre_kernel(const T* __restrict__ H, const T* __restrict__ dX, float* __restrict__ dh_pre,
                        std::int64_t tokens, std::int64_t row_packs, std::int64_t groups) {
  using P = Pack<T, E>;
  const P* Hp = reinterpret_cast<const P*>(H);    // (T, n, row_packs)
  const P* dXp = reinterpret_cast<const P*>(dX);  // (T, row_packs)
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = blockDim.x >> 5;
  const std::int64_t warp_stride = std::int64_t{gridDim.x} * warps;
  for (std::int64_t g = blockIdx.x * warps + (threadIdx.x >> 5); g < groups; g += warp_stride) {
    const std::int64_t t0 = g * K;
    float acc[K][n];  // (K, n): this lane's partial dot products
#pragma unroll
    for (int j = 0; j < K; ++j)
#pragma unroll
      for (int i = 0; i < n; ++i) acc[j][i] = 0.0f;

    for (std::int64_t p = lane; p < row_packs; p += 32) {
      P d[K];     // (K): pack p of each token's dX
      P h[K][n];  // (K, n): pack p of each token's streams
#pragma unroll
      for (int j = 0; j < K; ++j) {
        if (t0 + j < tokens) {
          d[j] = dXp[(t0 + j) * row_packs + p];
#pragma unroll
          for (int i = 0; i < n; ++i) h[j][i] = Hp[((t0 + j) * n + i) * row_packs + p];
        }
      }
#pragma unroll
      for (int j = 0; j < K; ++j) {
        if (t0 + j < tokens) {
#pragma unroll
          for (int e = 0; e < E; ++e) {
            const float de = to_float(d[j].v[e]);
#pragma unroll
            for (int i = 0; i < n; ++i) acc[j][i] = fmaf(to_float(h[j][i].v[e]), de, acc[j][i]);
          }
        }
      }
    }

#pragma unroll
    for (int j = 0; j < K; ++j)
#pragma unroll
      for (int i = 0; i < n; ++i) acc[j][i] = warp_sum(acc[j][i]);
    if (lane == 0) {
#pragma unroll
      for (int j = 0; j < K; ++j)
        if (t0 + j < tokens)
#pragma unroll
          for (int i = 0; i < n; ++i) dh_pre[(t0 + j) * n + i] = acc[j][i];
    }
  }
}

template <class T>
void launch(const LaunchArgs& a) {
  const auto [tokens, channels] = MhcAxes::of(a.shape);
  const T* H = a.tensor<const T>("H");
  const T* dX = a.tensor<const T>("dX");
  float* dh_pre = a.tensor<float>("dh_pre");
  const int threads = static_cast<int>(a.tunable("threads"));
  if (threads < 32 || threads % 32 != 0 || threads > kPreMapMaxThreads)
    throw std::invalid_argument("threads must be a multiple of 32 up to 512 (whole warps)");
  with_pack_elems<T>(pre_map_vector_ok<T>(channels, {H, dX}), [&](auto elems) {
    constexpr int E = decltype(elems)::value;
    with_token_count<2>(a.tunable("tokens_per_warp"), [&](auto count) {
      constexpr int K = decltype(count)::value;
      const std::int64_t row_packs = channels / E;
      const std::int64_t groups = (tokens + K - 1) / K;
      const int warps = threads / 32;
      pre_map_bwd_hpre_kernel<T, E, K><<<pre_map_blocks(groups, warps), threads, 0, a.stream>>>(
          H, dX, dh_pre, tokens, row_packs, groups);
    });
  });
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mhc_pre_map_bwd_hpre",
    .name = "fused_v1_warp_per_token_vec16",
    .role = Role::fused,
    .description = "one pass: a warp per K tokens, 16-byte packs of H and dX, fp32 fma per lane, "
                   "xor-butterfly warp sums (deterministic)",
    .launch = by_dtype_of<DType::fp32, DType::bf16>([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .tunables = {{"threads", {256, 128, 512}, "threads per block (a multiple of 32: warps per block x 32)"},
                 {"tokens_per_warp", {2, 1}, "tokens K one warp reduces at once (5 K packs in flight per lane)"}},
});

}  // namespace
}  // namespace kwb
