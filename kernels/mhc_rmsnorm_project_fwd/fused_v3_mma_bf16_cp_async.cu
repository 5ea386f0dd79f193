// mhc_rmsnorm_project_fwd fused_v3_mma_bf16_cp_async_k64: v2 with a cp.async pipeline of several
// 64-wide K chunks in flight per block, and the sums of squares taken from the MMA fragments.
//
// What v2 measured on an H100 (65536 x 1024 bf16): 376 us with 64-token tiles (47% of copy),
// 250 us with 128 (70%). Its register double buffer keeps one chunk (8-16 KB) in flight per block
// and waits for it at every __syncthreads; 64-token tiles also leave a nearly empty second wave
// (1024 tiles over ~924 resident blocks). Here each block keeps `stages - 1` chunks in flight
// (cp.async, no registers held), one __syncthreads per chunk:
//   wait for chunk c (cp.async.wait_group stages - 2); __syncthreads; issue chunk c + stages - 1
//   into the slot chunk c - 1 used (every warp is past it: the barrier); MMAs on chunk c.
// The sum of squares comes from the A fragments the MMAs already hold (each element of the
// 16 x 16 A tile sits in exactly one lane: pairs 0 and 2 of row `group`, pairs 1 and 3 of row
// group + 8), summed over the 4 lanes of a quad at the end; r is then known in the registers of
// the lanes that write Z.
// Edges: a 16-byte vector of H goes through cp.async when its row is 16-byte aligned (K % 8 == 0,
// i.e. C even) and it lies inside T and K; past T or K it is zero-filled (cp.async with 0 source
// bytes); a vector that straddles K or sits in an unaligned row is gathered element by element and
// stored to shared memory directly (visible after the next barrier). W is packed in prepare() as in
// v2 (Wt [32][Kpad], zero-padded), so its chunks are always whole and aligned.
//
// Napkin math (bf16, 65536 x 1024, 64-token tiles, 4 stages): shared memory 4 x (9216 + 4608) =
// 55 KB per block, 4 blocks (512 threads) per SM: 528 resident over 1024 tiles, two nearly full
// waves; 4 x 3 x 8 KB = 96 KB of H in flight per SM, ~3x what Little's law asks at 23 GB/s per SM.
// H 512 MB + W through L2 (256 MB) + Z, r 8 MB: ~175 us at 3000 GB/s. Target >= 90% of copy.
#include <cuda_bf16.h>

#include <cstdint>
#include <memory>
#include <stdexcept>

#include "catalogue/device_types.cuh"
#include "catalogue/registry.hpp"
#include "kernels/mhc_rmsnorm_project_fwd/project_fma.cuh"
#include "kernels/mhc_rmsnorm_project_fwd/project_mma.cuh"

namespace kwb {
namespace {

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, int src_bytes) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void add_pair_squares(std::uint32_t pair, float& ss) {
  const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&pair));
  ss = fmaf(f.x, f.x, fmaf(f.y, f.y, ss));
}

template <int BM>
constexpr int stage_bytes() {
  return (BM + kProjectP) * kMmaRowPad * 2;  // A (BM, 64 + pad) then B (P, 64 + pad), bf16
}

template <int BM, int STAGES>
__global__ void __launch_bounds__(2 * BM) project_mma_cp_async(const __nv_bfloat16* __restrict__ h,
                                                               const __nv_bfloat16* __restrict__ wt,
                                                               float* __restrict__ z, float* __restrict__ r,
                                                               std::int64_t tokens, std::int64_t k_len,
                                                               std::int64_t k_pad) {
  constexpr int kThreads = 2 * BM;
  constexpr int kBVecs = kProjectP * kMmaChunk / 8 / kThreads;
  static_assert(kBVecs >= 1 && kBVecs * kThreads == kProjectP * kMmaChunk / 8, "W chunk split");
  extern __shared__ __align__(16) unsigned char smem[];

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int group = lane >> 2, quad = lane & 3;
  const std::int64_t tile = std::int64_t{blockIdx.x} * BM;
  const bool aligned = k_len % 8 == 0;
  const int a_row = tid / 8, a_col = (tid % 8) * 8;  // rows a_row + j * BM / 4
  const std::int64_t chunks = k_pad / kMmaChunk;

  auto a_tile = [&](int stage) {
    return reinterpret_cast<__nv_bfloat16(*)[kMmaRowPad]>(smem + stage * stage_bytes<BM>());
  };
  auto b_tile = [&](int stage) {
    return reinterpret_cast<__nv_bfloat16(*)[kMmaRowPad]>(smem + stage * stage_bytes<BM>() + BM * kMmaRowPad * 2);
  };
  auto issue_chunk = [&](std::int64_t c, int stage) {
    const std::int64_t k0 = c * kMmaChunk;
    __nv_bfloat16(*as)[kMmaRowPad] = a_tile(stage);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int row = a_row + j * (BM / 4);
      const std::int64_t token = tile + row, k = k0 + a_col;
      void* dst = &as[row][a_col];
      if (token < tokens && aligned && k + 8 <= k_len) {
        cp_async16(dst, h + token * k_len + k, 16);
      } else if (token >= tokens || k >= k_len) {
        cp_async16(dst, h, 0);  // zero fill, nothing read
      } else {
        *reinterpret_cast<uint4*>(dst) = load_h8(h, token, tokens, k, k_len, false);
      }
    }
    __nv_bfloat16(*bs)[kMmaRowPad] = b_tile(stage);
#pragma unroll
    for (int j = 0; j < kBVecs; ++j) {
      const int v = tid + j * kThreads, p = v / 8, col = (v % 8) * 8;
      cp_async16(&bs[p][col], wt + p * k_pad + k0 + col, 16);
    }
  };

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < chunks) issue_chunk(s, s);
    cp_async_commit();  // empty groups keep the wait count uniform
  }
  float acc[kProjectP / 8][4] = {};
  float ss_lo = 0, ss_hi = 0;  // rows group and group + 8 of the warp's 16
  const int row0 = warp * 16 + group;
  for (std::int64_t c = 0; c < chunks; ++c) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    const std::int64_t next = c + STAGES - 1;
    if (next < chunks) issue_chunk(next, static_cast<int>(next % STAGES));
    cp_async_commit();
    const int stage = static_cast<int>(c % STAGES);
    const __nv_bfloat16(*as)[kMmaRowPad] = a_tile(stage);
    const __nv_bfloat16(*bs)[kMmaRowPad] = b_tile(stage);
#pragma unroll
    for (int kk = 0; kk < kMmaChunk; kk += 16) {
      const int col = kk + quad * 2;
      const std::uint32_t a[4] = {mma_pair(&as[row0][col]), mma_pair(&as[row0 + 8][col]),
                                  mma_pair(&as[row0][col + 8]), mma_pair(&as[row0 + 8][col + 8])};
      add_pair_squares(a[0], ss_lo);
      add_pair_squares(a[2], ss_lo);
      add_pair_squares(a[1], ss_hi);
      add_pair_squares(a[3], ss_hi);
#pragma unroll
      for (int nt = 0; nt < kProjectP / 8; ++nt) {
        const __nv_bfloat16* brow = bs[nt * 8 + group];
        mma_bf16_16816(acc[nt], a, mma_pair(brow + col), mma_pair(brow + col + 8));
      }
    }
  }
  cp_async_wait<0>();  // nothing real is left in flight; leave no group behind at exit

  // The 4 lanes of a quad hold disjoint columns of the same two rows.
  ss_lo += __shfl_xor_sync(0xffffffffu, ss_lo, 1);
  ss_lo += __shfl_xor_sync(0xffffffffu, ss_lo, 2);
  ss_hi += __shfl_xor_sync(0xffffffffu, ss_hi, 1);
  ss_hi += __shfl_xor_sync(0xffffffffu, ss_hi, 2);
  const float inv_k = 1.0f / static_cast<float>(k_len), eps = static_cast<float>(kMhcRmsEps);
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const std::int64_t token = tile + row0 + half * 8;
    if (token >= tokens) continue;
    const float rt = rsqrtf((half ? ss_hi : ss_lo) * inv_k + eps);
    if (quad == 0) r[token] = rt;
#pragma unroll
    for (int nt = 0; nt < kProjectP / 8; ++nt) {
      const float2 out = make_float2(rt * acc[nt][half * 2], rt * acc[nt][half * 2 + 1]);
      *reinterpret_cast<float2*>(z + token * kProjectP + nt * 8 + quad * 2) = out;
    }
  }
}

template <int BM, int STAGES>
void launch_cp_async(const LaunchArgs& a, std::int64_t tokens, std::int64_t k_len) {
  constexpr int kSmem = STAGES * stage_bytes<BM>();
  auto kernel = project_mma_cp_async<BM, STAGES>;
  // Above 48 KB of dynamic shared memory a kernel must opt in (cheap, idempotent).
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  const std::int64_t tiles = (tokens + BM - 1) / BM;
  kernel<<<static_cast<unsigned>(tiles), 2 * BM, kSmem, a.stream>>>(
      static_cast<const __nv_bfloat16*>(a.tensors[0]), a.state_as<PackedWeight>().wt,
      static_cast<float*>(a.tensors[2]), static_cast<float*>(a.tensors[3]), tokens, k_len, mma_padded_k(k_len));
}

void launch(const LaunchArgs& a) {
  const std::int64_t tokens = a.shape.at("tokens"), k_len = kMhcStreams * a.shape.at("channels");
  if (a.dtype == DType::fp32) {  // no tensor-core fp32 target: v1's FMA kernel
    launch_project_fma(static_cast<const float*>(a.tensors[0]), static_cast<const float*>(a.tensors[1]),
                       static_cast<float*>(a.tensors[2]), static_cast<float*>(a.tensors[3]), tokens, k_len, 8,
                       a.stream);
    return;
  }
  const std::int64_t bm = a.tunable("tokens_per_block"), stages = a.tunable("stages");
  if (bm == 128) {
    if (stages == 3) return launch_cp_async<128, 3>(a, tokens, k_len);
    if (stages == 2) return launch_cp_async<128, 2>(a, tokens, k_len);
    return launch_cp_async<128, 4>(a, tokens, k_len);
  }
  if (stages == 3) return launch_cp_async<64, 3>(a, tokens, k_len);
  if (stages == 2) return launch_cp_async<64, 2>(a, tokens, k_len);
  return launch_cp_async<64, 4>(a, tokens, k_len);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mhc_rmsnorm_project_fwd",
    .name = "fused_v3_mma_bf16_cp_async_k64",
    .role = Role::fused,
    .description = "v2 + cp.async pipeline (stages - 1 K chunks of 64 in flight per block), sums of squares "
                   "from the MMA fragments; fp32 runs v1's FMA kernel",
    .launch = launch,
    .refuse = {},
    .tunables = {{"tokens_per_block", {64, 128}, "tokens per block (2 x this threads); bf16 only"},
                 {"stages", {4, 3, 2}, "K chunks of 64 in the cp.async ring (stages - 1 in flight); bf16 only"}},
    .prepare = prepare_packed_weight,
});

}  // namespace
}  // namespace kwb
