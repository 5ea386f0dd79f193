// mhc_pre_map_bwd_dx fused_v1_token_groups_vec16: dH[t, i, c] = h_pre[t, i] * dX[t, c] in one
// pass: dX read once, dH written once, no fp32 intermediates.
//
// The mapping of mhc_pre_map_fwd's v1, run backwards: work item = (group of K consecutive tokens,
// one 16-byte pack of channels). A thread loads K packs of dX and the K tokens' coefficients
// (all loads before any store), then writes n = 4 packs per token, each the fp32 product
// rounded once to the case dtype. Consecutive threads take consecutive packs of one row, so each
// warp store covers 512 contiguous bytes of one stream's row. C not a multiple of the pack or
// misaligned pointers: the same kernel with 1-element packs (kernels/mhc_pre_map_fwd/
// pre_map_common.cuh).
//
// Napkin math, bf16 65536 x 1024: read dX 134 MB + h_pre 1 MB, write dH 537 MB = 672 MB; at
// ~3000 GB/s (H100 copy ceiling) 224 us. Writes are 4/5 of the traffic: stores are fire-and-
// forget, so the loads in flight only need to cover the 1/5 that is read; K = 2 (default) keeps
// 32 bytes of dX per thread in flight with 59 registers in bf16 (ptxas; 38 in fp32): 4 blocks of
// 256 threads per SM, 1024 threads x 32 bytes = 32 KB per SM, ~10x what the reads alone need. A write-heavy stream sits a little below
// a copy on H100 (write-allocate in L2, no read to overlap with). Expected: >= 90% of copy
// (~245 us); the baseline moves 5x the bytes in bf16 and the same bytes in fp32 (one launch).
#include <cstdint>
#include <stdexcept>

#include "kernels/mhc_pre_map_fwd/pre_map_common.cuh"

namespace kwb {
namespace {

constexpr int n = kPreMapStreams;

// items = ceil(tokens / K) * row_packs; row_packs = C / E packs per row of C channels.
template <class T, int E, int K>
__global__ void __launch_bounds__(kPreMapMaxThreads)
pre_map_bwd_dx_kernel(const float* __restrict__ h_pre, const T* __restrict__ dX, T* __restrict__ dH,
                      std::int64_t tokens, std::int64_t row_packs, std::int64_t items) {
  using P = Pack<T, E>;
  const P* dXp = reinterpret_cast<const P*>(dX);  // (T, row_packs)
  P* dHp = reinterpret_cast<P*>(dH);              // (T, n, row_packs)
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t w = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; w < items; w += stride) {
    const std::int64_t group = w / row_packs, p = w % row_packs;
    const std::int64_t t0 = group * K;
    float h[K][n];  // (K, n): the group's coefficients
    P g[K];         // (K): pack p of each token's dX
#pragma unroll
    for (int j = 0; j < K; ++j) {
      if (t0 + j < tokens) {
        load_pre_coefficients(h_pre, t0 + j, h[j]);
        g[j] = dXp[(t0 + j) * row_packs + p];
      }
    }
#pragma unroll
    for (int j = 0; j < K; ++j) {
      if (t0 + j < tokens) {
        float gf[E];
#pragma unroll
        for (int e = 0; e < E; ++e) gf[e] = to_float(g[j].v[e]);
#pragma unroll
        for (int i = 0; i < n; ++i) {
          P out;
#pragma unroll
          for (int e = 0; e < E; ++e) out.v[e] = from_float<T>(h[j][i] * gf[e]);
          dHp[((t0 + j) * n + i) * row_packs + p] = out;
        }
      }
    }
  }
}

template <class T>
void launch(const LaunchArgs& a) {
  const auto [tokens, channels] = MhcAxes::of(a.shape);
  const float* h_pre = a.tensor<const float>("h_pre");
  const T* dX = a.tensor<const T>("dX");
  T* dH = a.tensor<T>("dH");
  const int threads = static_cast<int>(a.tunable("threads"));
  if (threads < 1 || threads > kPreMapMaxThreads) throw std::invalid_argument("threads must be 1..512 (launch bounds)");
  with_pack_elems<T>(pre_map_vector_ok<T>(channels, {dX, dH}), [&](auto elems) {
    constexpr int E = decltype(elems)::value;
    with_token_count<4>(a.tunable("tokens_per_thread"), [&](auto count) {
      constexpr int K = decltype(count)::value;
      const std::int64_t row_packs = channels / E;
      const std::int64_t items = (tokens + K - 1) / K * row_packs;
      pre_map_bwd_dx_kernel<T, E, K>
          <<<pre_map_blocks(items, threads), threads, 0, a.stream>>>(h_pre, dX, dH, tokens, row_packs, items);
    });
  });
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mhc_pre_map_bwd_dx",
    .name = "fused_v1_token_groups_vec16",
    .role = Role::fused,
    .description = "one pass: each thread scales one 16-byte dX pack of K tokens into 4 dH packs each, "
                   "coefficients once per token",
    .launch = by_dtype_of<DType::fp32, DType::bf16>([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .tunables = {{"threads", {256, 128, 512}, "threads per block"},
                 {"tokens_per_thread", {2, 1, 4}, "tokens K whose dX packs one thread loads at once"}},
});

}  // namespace
}  // namespace kwb
