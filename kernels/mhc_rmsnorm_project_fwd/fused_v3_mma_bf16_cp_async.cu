// mhc_rmsnorm_project_fwd fused_v3_mma_bf16_cp_async_k64: v2 with a cp.async ring of K chunks
// per token tile, staggered walks over K, and the sums of squares taken from the MMA fragments.
//
// v2 stays well short of the copy roof: its register double buffer keeps one chunk in flight per
// block and waits for it at every __syncthreads. Here each block keeps `stages - 1` chunks in flight
// (cp.async, no registers held), one __syncthreads per chunk:
//   wait for chunk c (cp.async.wait_group stages - 2); __syncthreads; issue chunk c + stages - 1
//   into the slot chunk c - 1 used (every warp is past it: the barrier); MMAs on chunk c.
// Block b starts its walk over K at chunk b % chunks and wraps around, so the resident blocks do
// not all read the same chunk of W from the same L2 lines at once (measured faster with 64-token
// tiles). H's loads ask L2 for whole 256-byte blocks (cp.async ... L2::256B: measured faster with
// the default configuration).
// The sum of squares comes from the A fragments the MMAs already hold (each element of the
// 16 x 16 A tile sits in exactly one lane: pairs 0 and 2 of row `group`, pairs 1 and 3 of row
// group + 8), summed over the 4 lanes of a quad at the end; r is then in the registers of the
// lanes that write Z. The fp32 order of the sums is fixed per tile: deterministic.
// Edges: a 16-byte vector of H goes through cp.async when its row is 16-byte aligned (K % 8 == 0,
// i.e. C even) and it lies inside T and K; past T or K it is zero-filled (cp.async with 0 source
// bytes); a vector that straddles K or sits in an unaligned row is gathered element by element and
// stored to shared memory directly (visible after the next barrier). W is packed in prepare() as in
// v2 (Wt [32][Kpad], zero-padded to a multiple of 256), so its chunks are whole and aligned.
//
// Napkin math (bf16, 65536 x 1024, defaults: 128-token tiles, 64-wide chunks, 2 stages): shared
// memory 2 x (128 + 32) x 72 x 2 B = 46 KB per block of 256 threads, 4 blocks per SM: 528
// resident for 512 tiles, one wave. Bytes: H 512 MB + Z, r 8.3 MB from/to DRAM, W through L2
// (512 tiles x 256 KB = 128 MB). At ~3030 GB/s: ~175 us. Tensor work 17 GFLOP, a few % of the
// MMA peak. Expected: close to the copy roof, the defaults ahead of 128-wide chunks and 64-token
// tiles. fp32 cases run the tiled FMA kernel of project_fma_tiled.cuh (no fp32 target), ahead of
// the fp32 baseline and of v1's warp-per-token kernel. Measured: docs/results.md.
#include <cuda_bf16.h>

#include <cstdint>
#include <memory>
#include <stdexcept>

#include "harness/catalogue/device_types.cuh"
#include "harness/catalogue/registry.hpp"
#include "kernels/mhc_rmsnorm_project_fwd/project_fma.cuh"
#include "kernels/mhc_rmsnorm_project_fwd/project_fma_tiled.cuh"
#include "kernels/mhc_rmsnorm_project_fwd/project_mma.cuh"

namespace kwb {
namespace {

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, int src_bytes) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(src_bytes));
}
// The same, asking L2 to fetch the whole 256-byte block around the address (H: read once, in
// runs of 2 x KC bytes per token row).
__device__ __forceinline__ void cp_async16_prefetch(void* smem, const void* gmem) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;\n" ::"r"(dst), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void add_pair_squares(std::uint32_t pair, float& ss) {
  const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&pair));
  ss = fmaf(f.x, f.x, fmaf(f.y, f.y, ss));
}

// Shared row of a chunk of KC values, padded by 8 bf16 (16 bytes): a row stride of KC / 2 + 4
// words puts the 8 rows x 4 pairs of a fragment load in 32 distinct banks (KC = 64 or 128).
template <int KC>
constexpr int row_pad() {
  return KC + 8;
}
template <int BM, int KC>
constexpr int stage_bytes() {
  return (BM + kProjectP) * row_pad<KC>() * 2;  // A (BM, KC + pad) then B (P, KC + pad), bf16
}

template <int BM, int KC, int STAGES>
__global__ void __launch_bounds__(2 * BM) project_mma_cp_async(const __nv_bfloat16* __restrict__ h,
                                                               const __nv_bfloat16* __restrict__ wt,
                                                               float* __restrict__ z, float* __restrict__ r,
                                                               std::int64_t tokens, std::int64_t k_len,
                                                               std::int64_t k_pad) {
  constexpr int kThreads = 2 * BM;
  constexpr int kPad = row_pad<KC>();
  constexpr int kVecsPerRow = KC / 8;                   // 16-byte vectors per row of a chunk
  constexpr int kRowsPerPass = kThreads / kVecsPerRow;  // rows one pass of the block loads
  constexpr int kAVecs = BM / kRowsPerPass;             // (= KC / 16) per thread
  constexpr int kBVecs = kProjectP * kVecsPerRow / kThreads;
  static_assert(kAVecs * kRowsPerPass == BM && kBVecs * kThreads == kProjectP * kVecsPerRow, "chunk split");
  extern __shared__ __align__(16) unsigned char smem[];

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int group = lane >> 2, quad = lane & 3;
  const std::int64_t tile = std::int64_t{blockIdx.x} * BM;
  const bool aligned = k_len % 8 == 0;
  const int a_row = tid / kVecsPerRow, a_col = (tid % kVecsPerRow) * 8;  // rows a_row + j * kRowsPerPass
  const std::int64_t chunks = (k_len + KC - 1) / KC;  // Wt holds zeros up to a multiple of KC

  auto a_tile = [&](int stage) {
    return reinterpret_cast<__nv_bfloat16(*)[kPad]>(smem + stage * stage_bytes<BM, KC>());
  };
  auto b_tile = [&](int stage) {
    return reinterpret_cast<__nv_bfloat16(*)[kPad]>(smem + stage * stage_bytes<BM, KC>() + BM * kPad * 2);
  };
  // Blocks start their walk over K at different chunks (and wrap around), so that the resident
  // blocks do not all read the same chunk of W from the same L2 lines at the same time. The
  // order of the fp32 sums is then fixed per tile: still deterministic.
  const std::int64_t first = blockIdx.x % chunks;
  auto issue_chunk = [&](std::int64_t c, int stage) {
    const std::int64_t k0 = ((c + first) % chunks) * KC;
    __nv_bfloat16(*as)[kPad] = a_tile(stage);
#pragma unroll
    for (int j = 0; j < kAVecs; ++j) {
      const int row = a_row + j * kRowsPerPass;
      const std::int64_t token = tile + row, k = k0 + a_col;
      void* dst = &as[row][a_col];
      if (token < tokens && aligned && k + 8 <= k_len) {
        cp_async16_prefetch(dst, h + token * k_len + k);
      } else if (token >= tokens || k >= k_len) {
        cp_async16(dst, h, 0);  // zero fill, nothing read
      } else {
        *reinterpret_cast<uint4*>(dst) = load_h8(h, token, tokens, k, k_len, false);
      }
    }
    __nv_bfloat16(*bs)[kPad] = b_tile(stage);
#pragma unroll
    for (int j = 0; j < kBVecs; ++j) {
      const int v = tid + j * kThreads, p = v / kVecsPerRow, col = (v % kVecsPerRow) * 8;
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
    const __nv_bfloat16(*as)[kPad] = a_tile(stage);
    const __nv_bfloat16(*bs)[kPad] = b_tile(stage);
#pragma unroll
    for (int kk = 0; kk < KC; kk += 16) {
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

template <int BM, int KC, int STAGES>
void launch_cp_async(const LaunchArgs& a, const MhcAxes& axes) {
  constexpr int kSmem = STAGES * stage_bytes<BM, KC>();
  auto kernel = project_mma_cp_async<BM, KC, STAGES>;
  // Above 48 KB of dynamic shared memory a kernel must opt in (cheap, idempotent).
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  const std::int64_t tiles = (axes.tokens + BM - 1) / BM, k_len = axes.flat_len();
  kernel<<<static_cast<unsigned>(tiles), 2 * BM, kSmem, a.stream>>>(
      a.tensor<const __nv_bfloat16>("H"), a.state_as<PackedWeight>().wt, a.tensor<float>("Z"), a.tensor<float>("r"),
      axes.tokens, k_len, mma_padded_k(k_len));
}

// The ring length a (tile, chunk) takes: `stages` when it fits the 227 KB of shared memory an
// H100 block may have, else the longest that does (at least 2).
template <int BM, int KC>
void launch_ring(const LaunchArgs& a, const MhcAxes& axes, std::int64_t stages) {
  constexpr int kMaxSmem = 227 * 1024;
  if constexpr (4 * stage_bytes<BM, KC>() <= kMaxSmem)
    if (stages >= 4) return launch_cp_async<BM, KC, 4>(a, axes);
  if constexpr (3 * stage_bytes<BM, KC>() <= kMaxSmem)
    if (stages >= 3) return launch_cp_async<BM, KC, 3>(a, axes);
  launch_cp_async<BM, KC, 2>(a, axes);
}

template <int BM>
void launch_tile(const LaunchArgs& a, const MhcAxes& axes) {
  const std::int64_t kc = a.tunable("k_chunk"), stages = a.tunable("stages");
  if (kc == 64) return launch_ring<BM, 64>(a, axes, stages);
  if (kc == 256) return launch_ring<BM, 256>(a, axes, stages);
  launch_ring<BM, 128>(a, axes, stages);
}

// bf16 on the tensor cores, fp32 on CUDA cores: a dispatch of its own, not by_dtype's three types.
void launch(const LaunchArgs& a) {
  const auto axes = MhcAxes::of(a.shape);
  if (a.dtype == DType::fp32) {  // no tensor-core fp32 target: the tiled FMA kernel (project_fma_tiled.cuh)
    launch_project_fma_tiled(a, axes);
    return;
  }
  if (a.tunable("tokens_per_block") == 64) return launch_tile<64>(a, axes);
  launch_tile<128>(a, axes);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mhc_rmsnorm_project_fwd",
    .name = "fused_v3_mma_bf16_cp_async_k64",
    .role = Role::fused,
    .description = "v2 + cp.async pipeline (stages - 1 K chunks of 64 in flight per block), sums of squares "
                   "from the MMA fragments; fp32 runs a tiled FMA kernel",
    .launch = launch,
    .refuse = {},
    .math = "fp32: fp32",
    .tunables = {{"tokens_per_block", {128, 64}, "tokens per block (2 x this threads); bf16 only"},
                 {"k_chunk", {64, 128, 256}, "K values per chunk: 2 x this contiguous bytes per token row per load"},
                 {"stages", {2, 3, 4}, "K chunks in the cp.async ring (stages - 1 in flight), shortened to what fits "
                                       "227 KB of shared memory; bf16 only"}},
    .prepare = prepare_packed_weight,
});

}  // namespace
}  // namespace kwb
