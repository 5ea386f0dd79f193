// mhc_post_res_fwd fused_v1_token_pack_vec16: Hout in one streaming pass, each thread one
// 16-byte pack position c of one token, all 4 streams mixed in fp32 registers.
//
// Per item (token t, pack p): 4 packs of H[t, :, p] and 1 of F[t, p] (5 x 16-byte loads, all
// issued before any math), the token's 20 coefficients (5 float4 loads, shared by the warp:
// consecutive threads hold consecutive packs of the same token), then
//   Hout[t, i, p] = sum_j R[t, i, j] H[t, j, p] + h_post[t, i] F[t, p]     (4 x 5 fp32 FMAs)
// and 4 x 16-byte stores. Items are flat over T x (C / E), so every warp load instruction covers
// 512 contiguous bytes of one stream row; `items` per thread are a grid apart (all loads of all
// items in flight together). C not a multiple of 8 (bf16) / 4 (fp32): the same kernel with
// 1-element packs (post_res_common.cuh).
//
// Napkin math, bf16 65536 x 1024: H 512 MiB + F 128 MiB in, Hout 512 MiB out, 5 MiB of
// coefficients: 1.21 GB; at an H100's ~3000 GB/s copy ceiling, ~400 us. 20 FMAs per 18 bytes
// is nothing against the issue rate. Registers (ptxas, bf16): 72 at items = 1, 128 at 2, 225
// at 4; at 72, 3 blocks of 256 threads per SM with 80 bytes of loads in flight each (60 KB per
// SM, ~3x what Little's law asks at ~3 TB/s). Reads and writes mix 5:4, close to a copy.
// Expected: >= 90% of copy. Measured: docs/results.md.
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/mhc_post_res_fwd/post_res_common.cuh"

namespace kwb {
namespace {

constexpr int n = kPostResStreams;

// T storage type, E elements per pack, U items per thread.
template <class T, int E, int U>
__global__ void post_res_fwd_kernel(const T* __restrict__ H, const T* __restrict__ F, const float* __restrict__ R,
                                    const float* __restrict__ h_post, T* __restrict__ Hout, std::int64_t tokens,
                                    std::int64_t packs_per_row) {
  using P = Pack<T, E>;
  const std::int64_t total = tokens * packs_per_row;
  const std::int64_t first = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  const P* Hp = reinterpret_cast<const P*>(H);  // [T, n, packs_per_row]
  const P* Fp = reinterpret_cast<const P*>(F);  // [T, packs_per_row]
  P* Op = reinterpret_cast<P*>(Hout);           // [T, n, packs_per_row]

  // 1. Every load of every item first.
  P h[U][n], f[U];  // (U, n) and (U) packs
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const std::int64_t q = first + u * stride;
    if (q < total) {
      const std::int64_t t = q / packs_per_row, p = q - t * packs_per_row;
#pragma unroll
      for (int j = 0; j < n; ++j) h[u][j] = Hp[(t * n + j) * packs_per_row + p];
      f[u] = Fp[t * packs_per_row + p];
    }
  }
  // 2. Mix in fp32 and store.
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const std::int64_t q = first + u * stride;
    if (q >= total) continue;
    const std::int64_t t = q / packs_per_row, p = q - t * packs_per_row;
    float r[16], hp[4];
    load_post_res_coefficients<(E > 1)>(R, h_post, t, r, hp);
    P out[n];
#pragma unroll
    for (int e = 0; e < E; ++e) {
      float x[n];
#pragma unroll
      for (int j = 0; j < n; ++j) x[j] = to_float(h[u][j].v[e]);
      const float fe = to_float(f[u].v[e]);
#pragma unroll
      for (int i = 0; i < n; ++i) {
        float v = hp[i] * fe;
#pragma unroll
        for (int j = 0; j < n; ++j) v = fmaf(r[i * n + j], x[j], v);
        out[i].v[e] = from_float<T>(v);
      }
    }
#pragma unroll
    for (int i = 0; i < n; ++i) Op[(t * n + i) * packs_per_row + p] = out[i];
  }
}

// The op's tensors, looked up once: the vector check needs every base, the kernel every pointer.
template <class T>
struct FwdTensors {
  const T* H;
  const T* F;
  const float* R;
  const float* h_post;
  T* Hout;
  static FwdTensors of(const LaunchArgs& a) {
    return {a.tensor<const T>("H"), a.tensor<const T>("F"), a.tensor<const float>("R"),
            a.tensor<const float>("h_post"), a.tensor<T>("Hout")};
  }
};

template <class T, int E, int U>
void run(const LaunchArgs& a, const FwdTensors<T>& t, const MhcAxes& axes, int threads) {
  const std::int64_t packs_per_row = axes.channels / E;
  const std::int64_t total = axes.tokens * packs_per_row;
  const std::int64_t per_block = std::int64_t{threads} * U;
  const auto blocks = static_cast<unsigned>((total + per_block - 1) / per_block);
  post_res_fwd_kernel<T, E, U><<<blocks, threads, 0, a.stream>>>(t.H, t.F, t.R, t.h_post, t.Hout, axes.tokens,
                                                                 packs_per_row);
}

template <class T, int E>
void run_items(const LaunchArgs& a, const FwdTensors<T>& t, const MhcAxes& axes, int threads, int items) {
  switch (items) {
    case 2: run<T, E, 2>(a, t, axes, threads); break;
    case 4: run<T, E, 4>(a, t, axes, threads); break;
    default: run<T, E, 1>(a, t, axes, threads); break;
  }
}

template <class T>
void launch(const LaunchArgs& a) {
  const int threads = static_cast<int>(a.tunable("threads"));
  const int items = static_cast<int>(a.tunable("items"));
  const auto axes = MhcAxes::of(a.shape);
  const auto t = FwdTensors<T>::of(a);
  if (post_res_vectorizable<T>(axes.channels, {t.H, t.F, t.R, t.h_post, t.Hout}))
    run_items<T, kPostResPackElems<T>>(a, t, axes, threads, items);
  else run_items<T, 1>(a, t, axes, threads, items);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mhc_post_res_fwd",
    .name = "fused_v1_token_pack_vec16",
    .role = Role::fused,
    .description = "one pass: a thread mixes one 16-byte pack position of all 4 streams of a token in fp32 "
                   "(5 packs in, 4 out); 1-element packs when C is not a multiple of the pack",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = [](const Shape& s, DType) -> std::optional<std::string> {
      // The grid is flat over T x C / E items (at E = 1 at worst), 128 threads a block at least.
      const auto [tokens, channels] = MhcAxes::of(s);
      if (tokens * channels / 128 > 2147483647) return "T x C beyond the grid's x dimension";
      return std::nullopt;
    },
    .workspace_bytes = {},
    .tunables = {{"threads", {256, 128, 512}, "threads per block"},
                 {"items", {1, 2, 4}, "(token, pack) items per thread, a grid apart, loads all in flight"}},
});

}  // namespace
}  // namespace kwb
