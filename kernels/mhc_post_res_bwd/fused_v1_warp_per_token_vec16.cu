// mhc_post_res_bwd fused_v1_warp_per_token_vec16: dH, dF, dR and dh_post in one pass, one warp
// per token.
//
// A warp owns token t. Each lane walks its 16-byte pack positions p = lane, lane + 32, ... of
// the C channels (`packs` of them per step, all loads in flight together): 4 packs of dHout,
// 4 of H and 1 of F in, then in fp32
//   dH[j, p] = sum_i R[i, j] dHout[i, p]          dF[p] = sum_i h_post[i] dHout[i, p]
// written at once (4 + 1 packs out), while the lane accumulates its share of the 20 per-token
// dots in registers: dR[i, j] += dHout[i, p] H[j, p] (16), dh_post[i] += dHout[i, p] F[p] (4).
// At the end, 20 xor-butterfly warp sums (fixed order: deterministic, no atomics, no shared
// memory) leave every total in every lane; lane k writes dot k. The whole warp leaves together
// when t >= T, so every shuffle has all 32 lanes.
//
// Napkin math, bf16 65536 x 1024: 9 x 128 MiB in (H, dHout, F), 5 x 128 MiB out (dH, dF):
// 1.88 GB plus 10 MiB of coefficients; at ~3000 GB/s, ~630 us. 40 FMAs per (t, c) (2.7 G) are
// ~90 us of an H100's fp32 rate, hidden under the memory stream; the 100 shuffles per token
// (~28 us per SM in total) too. Registers (ptxas, bf16): 20 accumulators, 20 coefficients, 9
// packs in flight (36) and temporaries: 128 at packs = 1 (249 at 2): 16 warps per SM with 144
// bytes of loads in flight per lane (~73 KB per SM, ~4x Little's law). Reads and writes mix 9:5.
// Expected: ~90% of copy (a warp walks C serially, so short rows (C < 256 bf16) leave lanes
// idle; the target C = 1024 gives each lane 4 packs). Measured: docs/results.md.
#include <cstdint>

#include "harness/catalogue/typed_launch.cuh"
#include "kernels/common/block_reduce.cuh"
#include "kernels/mhc_post_res_fwd/post_res_common.cuh"

namespace kwb {
namespace {

constexpr int n = kPostResStreams;

// T storage type, E elements per pack, U packs per lane per step.
template <class T, int E, int U>
__global__ void post_res_bwd_kernel(const T* __restrict__ H, const T* __restrict__ F, const float* __restrict__ R,
                                    const float* __restrict__ h_post, const T* __restrict__ dHout,
                                    T* __restrict__ dH, T* __restrict__ dF, float* __restrict__ dR,
                                    float* __restrict__ dh_post, std::int64_t tokens, std::int64_t packs_per_row) {
  using P = Pack<T, E>;
  const int lane = threadIdx.x & 31;
  const std::int64_t t = blockIdx.x * std::int64_t{blockDim.x >> 5} + (threadIdx.x >> 5);
  if (t >= tokens) return;  // warp-uniform: all 32 lanes share t

  float r[16], hp[4];
  load_post_res_coefficients<(E > 1)>(R, h_post, t, r, hp);
  const P* Hp = reinterpret_cast<const P*>(H) + t * n * packs_per_row;   // (n, packs_per_row)
  const P* Gp = reinterpret_cast<const P*>(dHout) + t * n * packs_per_row;  // (n, packs_per_row)
  const P* Fp = reinterpret_cast<const P*>(F) + t * packs_per_row;       // (packs_per_row)
  P* dHp = reinterpret_cast<P*>(dH) + t * n * packs_per_row;             // (n, packs_per_row)
  P* dFp = reinterpret_cast<P*>(dF) + t * packs_per_row;                 // (packs_per_row)

  float acc_r[16] = {}, acc_p[4] = {};  // this lane's share of dR[i * n + j] and dh_post[i]
  for (std::int64_t p0 = lane; p0 < packs_per_row; p0 += 32 * U) {
    P g[U][n], h[U][n], f[U];  // dHout, H (U, n) and F (U)
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t p = p0 + 32 * u;
      if (p < packs_per_row) {
#pragma unroll
        for (int i = 0; i < n; ++i) {
          g[u][i] = Gp[i * packs_per_row + p];
          h[u][i] = Hp[i * packs_per_row + p];
        }
        f[u] = Fp[p];
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t p = p0 + 32 * u;
      if (p >= packs_per_row) continue;
      P dh[n], df;
#pragma unroll
      for (int e = 0; e < E; ++e) {
        float gv[n], hv[n];
#pragma unroll
        for (int i = 0; i < n; ++i) gv[i] = to_float(g[u][i].v[e]), hv[i] = to_float(h[u][i].v[e]);
        const float fv = to_float(f[u].v[e]);
        float dfv = 0;
#pragma unroll
        for (int i = 0; i < n; ++i) {
          dfv = fmaf(hp[i], gv[i], dfv);
          acc_p[i] = fmaf(gv[i], fv, acc_p[i]);
#pragma unroll
          for (int j = 0; j < n; ++j) acc_r[i * n + j] = fmaf(gv[i], hv[j], acc_r[i * n + j]);
        }
        df.v[e] = from_float<T>(dfv);
#pragma unroll
        for (int j = 0; j < n; ++j) {
          float v = 0;
#pragma unroll
          for (int i = 0; i < n; ++i) v = fmaf(r[i * n + j], gv[i], v);
          dh[j].v[e] = from_float<T>(v);
        }
      }
#pragma unroll
      for (int j = 0; j < n; ++j) dHp[j * packs_per_row + p] = dh[j];
      dFp[p] = df;
    }
  }

  // Every lane ends with every total; lane k writes dR[t, k] (k < 16), lane 16 + i dh_post[t, i].
#pragma unroll
  for (int k = 0; k < 16; ++k) {
    const float total = warp_sum(acc_r[k]);
    if (lane == k) dR[t * 16 + k] = total;
  }
#pragma unroll
  for (int i = 0; i < n; ++i) {
    const float total = warp_sum(acc_p[i]);
    if (lane == 16 + i) dh_post[t * n + i] = total;
  }
}

// The op's tensors, looked up once: the vector check needs every base, the kernel every pointer.
template <class T>
struct BwdTensors {
  const T* H;
  const T* F;
  const float* R;
  const float* h_post;
  const T* dHout;
  T* dH;
  T* dF;
  float* dR;
  float* dh_post;
  static BwdTensors of(const LaunchArgs& a) {
    return {a.tensor<const T>("H"),         a.tensor<const T>("F"),     a.tensor<const float>("R"),
            a.tensor<const float>("h_post"), a.tensor<const T>("dHout"), a.tensor<T>("dH"),
            a.tensor<T>("dF"),               a.tensor<float>("dR"),      a.tensor<float>("dh_post")};
  }
};

template <class T, int E, int U>
void run(const LaunchArgs& a, const BwdTensors<T>& t, const MhcAxes& axes, int tokens_per_block) {
  const std::int64_t packs_per_row = axes.channels / E;
  const auto blocks = static_cast<unsigned>((axes.tokens + tokens_per_block - 1) / tokens_per_block);
  post_res_bwd_kernel<T, E, U><<<blocks, 32 * tokens_per_block, 0, a.stream>>>(
      t.H, t.F, t.R, t.h_post, t.dHout, t.dH, t.dF, t.dR, t.dh_post, axes.tokens, packs_per_row);
}

template <class T, int E>
void run_packs(const LaunchArgs& a, const BwdTensors<T>& t, const MhcAxes& axes, int tokens_per_block, int packs) {
  if (packs == 2) run<T, E, 2>(a, t, axes, tokens_per_block);
  else run<T, E, 1>(a, t, axes, tokens_per_block);
}

template <class T>
void launch(const LaunchArgs& a) {
  const int tokens_per_block = static_cast<int>(a.tunable("tokens_per_block"));
  const int packs = static_cast<int>(a.tunable("packs"));
  const auto axes = MhcAxes::of(a.shape);
  const auto t = BwdTensors<T>::of(a);
  const bool vec = post_res_vectorizable<T>(
      axes.channels, {t.H, t.F, t.R, t.h_post, t.dHout, t.dH, t.dF, t.dR, t.dh_post});
  if (vec) run_packs<T, kPostResPackElems<T>>(a, t, axes, tokens_per_block, packs);
  else run_packs<T, 1>(a, t, axes, tokens_per_block, packs);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mhc_post_res_bwd",
    .name = "fused_v1_warp_per_token_vec16",
    .role = Role::fused,
    .description = "one pass, one warp per token: 16-byte packs of dHout, H, F in, dH and dF out, the 20 "
                   "per-token dots (dR, dh_post) in registers then warp shuffles (deterministic)",
    .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = {},
    .workspace_bytes = {},
    .tunables = {{"tokens_per_block", {8, 4, 16}, "tokens (warps) per block of 32 x tokens_per_block threads"},
                 {"packs", {1, 2}, "16-byte packs per lane per step along C, loads all in flight"}},
});

}  // namespace
}  // namespace kwb
