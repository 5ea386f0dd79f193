// mhc_pre_map_fwd fused_v1_token_groups_vec16: X[t, c] = sum_i h_pre[t, i] * H[t, i, c] in one
// pass: every H element read once, every X element written once, no intermediate.
//
// Work item = (group of K consecutive tokens, one 16-byte pack of channels). A thread loads its
// K tokens' 4 coefficients and the K x 4 packs of H (all loads issued before any math, so K x 4
// x 16 bytes are in flight per thread), then writes K packs of X with the sum in fp32 (fma
// chain, one rounding to the case dtype). Consecutive threads take consecutive packs of the same
// rows, so each warp load/store instruction covers 512 contiguous bytes of one stream's row; the
// h_pre loads of a warp hit one or two tokens (L1 broadcast). Items run on a grid of one item
// per thread (grid-stride beyond 2^31-1 blocks); the item -> (group, pack) split is one 64-bit
// division, ~70 instructions per 16 x K x 5 bytes moved: far below the issue budget.
// C not a multiple of the pack (C = 1, 33) or misaligned pointers: same kernel, 1-element packs.
//
// Napkin math, bf16 65536 x 1024: read H 537 MB + h_pre 1 MB, write X 134 MB = 672 MB; at
// ~3000 GB/s (H100 copy ceiling) 224 us. K = 2 (default): 8 packs of H (128 bytes) + 8
// coefficients per thread; ptxas gives 97 registers in bf16 (the 64 converted values live at
// once; 58 at K = 1, 61 in fp32 at K = 2), so 2 blocks of 256 threads fit per SM: 512 threads x
// 128 bytes = 64 KB of loads in flight per SM, ~4x what Little's law asks (~3 TB/s x ~0.7 us /
// 132 SMs = 16 KB). K = 1 gives the same bytes in flight with twice the warps: the tuner
// decides. Reads:writes are 4:1, a read-heavy stream, which usually runs at or slightly above
// the copy ceiling. Expected: >= 90% of copy (~245 us). baseline_eager_mul_sum moves 5x the
// bytes in bf16 (fp32 intermediates, 3 launches) and 2.6x in fp32.
#include <cstdint>
#include <stdexcept>

#include "kernels/mhc_pre_map_fwd/pre_map_common.cuh"

namespace kwb {
namespace {

constexpr int n = kPreMapStreams;

// items = ceil(tokens / K) * row_packs; row_packs = C / E packs per row of C channels.
template <class T, int E, int K>
__global__ void __launch_bounds__(kPreMapMaxThreads)
pre_map_fwd_kernel(const T* __restrict__ H, const float* __restrict__ h_pre, T* __restrict__ X,
                   std::int64_t tokens, std::int64_t row_packs, std::int64_t items) {
  using P = Pack<T, E>;
  const P* Hp = reinterpret_cast<const P*>(H);  // (T, n, row_packs)
  P* Xp = reinterpret_cast<P*>(X);              // (T, row_packs)
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t w = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; w < items; w += stride) {
    const std::int64_t group = w / row_packs, p = w % row_packs;
    const std::int64_t t0 = group * K;
    float h[K][n];  // (K, n): the group's coefficients
    P in[K][n];     // (K, n): pack p of each stream of each token
#pragma unroll
    for (int j = 0; j < K; ++j) {
      if (t0 + j < tokens) {
        load_pre_coefficients(h_pre, t0 + j, h[j]);
#pragma unroll
        for (int i = 0; i < n; ++i) in[j][i] = Hp[((t0 + j) * n + i) * row_packs + p];
      }
    }
#pragma unroll
    for (int j = 0; j < K; ++j) {
      if (t0 + j < tokens) {
        P out;
#pragma unroll
        for (int e = 0; e < E; ++e) {
          float sum = h[j][0] * to_float(in[j][0].v[e]);
#pragma unroll
          for (int i = 1; i < n; ++i) sum = fmaf(h[j][i], to_float(in[j][i].v[e]), sum);
          out.v[e] = from_float<T>(sum);
        }
        Xp[(t0 + j) * row_packs + p] = out;
      }
    }
  }
}

template <class T>
void launch(const LaunchArgs& a) {
  const auto [tokens, channels] = MhcAxes::of(a.shape);
  const T* H = a.tensor<const T>("H");
  const float* h_pre = a.tensor<const float>("h_pre");
  T* X = a.tensor<T>("X");
  const int threads = static_cast<int>(a.tunable("threads"));
  if (threads < 1 || threads > kPreMapMaxThreads) throw std::invalid_argument("threads must be 1..512 (launch bounds)");
  with_pack_elems<T>(pre_map_vector_ok<T>(channels, {H, X}), [&](auto elems) {
    constexpr int E = decltype(elems)::value;
    with_token_count<2>(a.tunable("tokens_per_thread"), [&](auto count) {
      constexpr int K = decltype(count)::value;
      const std::int64_t row_packs = channels / E;
      const std::int64_t items = (tokens + K - 1) / K * row_packs;
      pre_map_fwd_kernel<T, E, K>
          <<<pre_map_blocks(items, threads), threads, 0, a.stream>>>(H, h_pre, X, tokens, row_packs, items);
    });
  });
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mhc_pre_map_fwd",
    .name = "fused_v1_token_groups_vec16",
    .role = Role::fused,
    .description = "one pass: each thread mixes one 16-byte channel pack of K tokens (4 K loads in flight), "
                   "fp32 fma, coefficients once per token",
    .launch = by_dtype_of<DType::fp32, DType::bf16>([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .tunables = {{"threads", {256, 128, 512}, "threads per block"},
                 {"tokens_per_thread", {2, 1}, "tokens K whose packs one thread loads at once (4 K packs of H); K = 4 "
                  "needs more than the 128 registers that 512-thread blocks allow"}},
});

}  // namespace
}  // namespace kwb
