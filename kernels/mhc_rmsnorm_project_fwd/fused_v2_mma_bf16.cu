// mhc_rmsnorm_project_fwd fused_v2_mma_bf16_k64: the projection on tensor cores (bf16), r from
// the same shared tiles; fp32 cases run the tiled FMA kernel of project_fma_tiled.cuh (no fp32
// target).
//
// A block owns a tile of BM tokens (tunable tokens_per_block, 2 * BM threads, BM / 16 warps)
// and walks K = n * C in chunks of 64:
//   - each thread loads 4 16-byte vectors of the H tile [BM, 64] (rows tid / 8 + j BM / 4,
//     columns 8 (tid % 8) ..) and the W chunk into registers, adds their squares to its 4
//     per-row sums, and stores them to shared memory (double buffered: the next chunk's loads
//     are issued before this chunk's MMAs, one __syncthreads per chunk);
//   - each warp multiplies its 16 tokens by the chunk of W: 4 k16 steps x 4 n8 tiles of
//     mma.sync m16n8k16 bf16 -> fp32, fragments read straight from shared memory (rows padded to
//     72 bf16 = 36 words, so the 8 rows x 4 pairs of a fragment hit 32 distinct banks).
// W is packed once in prepare() (outside timing) as Wt [P = 32][Kpad] bf16, K zero-padded to a
// multiple of 64, so the B fragments' k pairs are contiguous and W chunks need no bounds checks.
// H rows are 16-byte aligned when K % 8 == 0 (C even); otherwise, and at the K and T edges, a
// vector is gathered element by element with zeros past the ends (zeros add nothing to either
// sum), so any T >= 1 and C >= 1 run.
// Epilogue: the 8 threads of a row sum their squares (shuffles), r = rsqrt(ss / K + eps) goes to
// shared memory and to r[t]; each warp writes Z = r * acc as float2 pairs.
//
// Napkin math (bf16, 65536 x 1024, BM = 64): H 512 MB from DRAM, W 256 KB per block through L2
// (1024 blocks: 256 MB of L2 reads, half of H), Z + r 8.3 MB. At ~3000 GB/s: ~175 us. Tensor
// work: 17 GFLOP, ~2% of the bf16 MMA peak. Per SM: 2 x 9.2 KB (A) + 2 x 4.6 KB (B) = 27.6 KB of
// shared memory, 128 threads: ~7 blocks resident, 7 x 8 KB of H loads in flight per chunk.
// Expected >= 90% of the copy ceiling; it stays well short (64-token tiles also put 1024 tiles on
// ~924 resident blocks: a second, nearly empty wave). One chunk in flight per block is too little:
// fused_v3 keeps a cp.async ring instead. Measured: docs/results.md.
#include <cuda_bf16.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <type_traits>

#include "harness/catalogue/device_types.cuh"
#include "harness/catalogue/registry.hpp"
#include "kernels/mhc_rmsnorm_project_fwd/project_fma.cuh"
#include "kernels/mhc_rmsnorm_project_fwd/project_fma_tiled.cuh"
#include "kernels/mhc_rmsnorm_project_fwd/project_mma.cuh"

namespace kwb {
namespace {

// ss += the squares of 8 bf16 values.
__device__ __forceinline__ void add_squares(const uint4& v, float& ss) {
  const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __bfloat1622float2(pairs[i]);
    ss = fmaf(f.x, f.x, fmaf(f.y, f.y, ss));
  }
}

template <int BM>
__global__ void __launch_bounds__(2 * BM) project_mma_bf16(const __nv_bfloat16* __restrict__ h,
                                                           const __nv_bfloat16* __restrict__ wt,
                                                           float* __restrict__ z, float* __restrict__ r,
                                                           std::int64_t tokens, std::int64_t k_len,
                                                           std::int64_t k_pad) {
  constexpr int kThreads = 2 * BM;
  constexpr int kAVecs = 4;                                // BM * 8 vectors / (2 BM) threads
  constexpr int kBVecs = kProjectP * kMmaChunk / 8 / kThreads;  // 256 vectors of W per chunk
  static_assert(kBVecs >= 1 && kBVecs * kThreads == kProjectP * kMmaChunk / 8, "W chunk split");
  __shared__ __align__(16) __nv_bfloat16 a_tile[2][BM][kMmaRowPad];        // (BM, 64 + pad) x 2 stages
  __shared__ __align__(16) __nv_bfloat16 b_tile[2][kProjectP][kMmaRowPad];  // (P, 64 + pad) x 2 stages
  __shared__ float r_tile[BM];

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int group = lane >> 2, quad = lane & 3;  // mma fragment coordinates
  const std::int64_t tile = std::int64_t{blockIdx.x} * BM;
  const bool aligned = k_len % 8 == 0;
  const int a_row = tid / 8, a_col = (tid % 8) * 8;  // rows a_row + j * BM / 4
  const std::int64_t chunks = k_pad / kMmaChunk;

  uint4 a_regs[kAVecs], b_regs[kBVecs];
  float ss[kAVecs] = {};
  auto load_chunk = [&](std::int64_t c) {
    const std::int64_t k0 = c * kMmaChunk;
#pragma unroll
    for (int j = 0; j < kAVecs; ++j) {
      a_regs[j] = load_h8(h, tile + a_row + j * (BM / 4), tokens, k0 + a_col, k_len, aligned);
      add_squares(a_regs[j], ss[j]);
    }
#pragma unroll
    for (int j = 0; j < kBVecs; ++j) {
      const int v = tid + j * kThreads, p = v / 8, col = (v % 8) * 8;
      b_regs[j] = __ldg(reinterpret_cast<const uint4*>(wt + p * k_pad + k0 + col));
    }
  };
  auto store_chunk = [&](int stage) {
#pragma unroll
    for (int j = 0; j < kAVecs; ++j)
      *reinterpret_cast<uint4*>(&a_tile[stage][a_row + j * (BM / 4)][a_col]) = a_regs[j];
#pragma unroll
    for (int j = 0; j < kBVecs; ++j) {
      const int v = tid + j * kThreads;
      *reinterpret_cast<uint4*>(&b_tile[stage][v / 8][(v % 8) * 8]) = b_regs[j];
    }
  };

  float acc[kProjectP / 8][4] = {};  // 4 n8 tiles of the warp's 16 x 32 output
  load_chunk(0);
  store_chunk(0);
  __syncthreads();
  for (std::int64_t c = 0; c < chunks; ++c) {
    const int stage = static_cast<int>(c & 1);
    if (c + 1 < chunks) load_chunk(c + 1);  // in flight during the MMAs below
    const __nv_bfloat16(*as)[kMmaRowPad] = a_tile[stage];
    const __nv_bfloat16(*bs)[kMmaRowPad] = b_tile[stage];
    const int row0 = warp * 16 + group;
#pragma unroll
    for (int kk = 0; kk < kMmaChunk; kk += 16) {
      const int col = kk + quad * 2;
      const std::uint32_t a[4] = {mma_pair(&as[row0][col]), mma_pair(&as[row0 + 8][col]),
                                  mma_pair(&as[row0][col + 8]), mma_pair(&as[row0 + 8][col + 8])};
#pragma unroll
      for (int nt = 0; nt < kProjectP / 8; ++nt) {
        const __nv_bfloat16* brow = bs[nt * 8 + group];
        mma_bf16_16816(acc[nt], a, mma_pair(brow + col), mma_pair(brow + col + 8));
      }
    }
    if (c + 1 < chunks) store_chunk(stage ^ 1);
    __syncthreads();
  }

  // r per row: the 8 threads of a row hold its partial sums of squares (lanes differing in bits 0-2).
#pragma unroll
  for (int j = 0; j < kAVecs; ++j) {
    float s = ss[j];
    s += __shfl_xor_sync(0xffffffffu, s, 1);
    s += __shfl_xor_sync(0xffffffffu, s, 2);
    s += __shfl_xor_sync(0xffffffffu, s, 4);
    if ((tid & 7) == 0) {
      const int row = a_row + j * (BM / 4);
      const float rt = rsqrtf(s / static_cast<float>(k_len) + static_cast<float>(kMhcRmsEps));
      r_tile[row] = rt;
      if (tile + row < tokens) r[tile + row] = rt;
    }
  }
  __syncthreads();
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int row = warp * 16 + group + half * 8;
    const std::int64_t token = tile + row;
    if (token >= tokens) continue;
    const float rt = r_tile[row];
#pragma unroll
    for (int nt = 0; nt < kProjectP / 8; ++nt) {
      const float2 out = make_float2(rt * acc[nt][half * 2], rt * acc[nt][half * 2 + 1]);
      *reinterpret_cast<float2*>(z + token * kProjectP + nt * 8 + quad * 2) = out;
    }
  }
}

template <int BM>
void launch_mma(const LaunchArgs& a, const MhcAxes& axes) {
  const std::int64_t tiles = (axes.tokens + BM - 1) / BM, k_len = axes.flat_len();
  project_mma_bf16<BM><<<static_cast<unsigned>(tiles), 2 * BM, 0, a.stream>>>(
      a.tensor<const __nv_bfloat16>("H"), a.state_as<PackedWeight>().wt, a.tensor<float>("Z"), a.tensor<float>("r"),
      axes.tokens, k_len, mma_padded_k(k_len));
}

// bf16 on the tensor cores, fp32 on CUDA cores: a dispatch of its own, not by_dtype's three types.
void launch(const LaunchArgs& a) {
  const auto axes = MhcAxes::of(a.shape);
  if (a.dtype == DType::fp32) {  // no tensor-core fp32 target: the tiled FMA kernel (project_fma_tiled.cuh)
    launch_project_fma_tiled(a, axes);
    return;
  }
  switch (a.tunable("tokens_per_block")) {
    case 32: launch_mma<32>(a, axes); return;
    case 128: launch_mma<128>(a, axes); return;
    default: launch_mma<64>(a, axes); return;
  }
}

KWB_REGISTER_VARIANT(Variant{
    .op = "mhc_rmsnorm_project_fwd",
    .name = "fused_v2_mma_bf16_k64",
    .role = Role::fused,
    .description = "bf16: token tiles x 64-wide K chunks in shared memory (double buffered), projection on "
                   "mma.sync m16n8k16, r from the same tiles; fp32 runs a tiled FMA kernel",
    .launch = launch,
    .refuse = {},
    .math = "fp32: fp32",
    .tunables = {{"tokens_per_block", {64, 32, 128}, "tokens per block (2 x this threads); bf16 only"}},
    .prepare = prepare_packed_weight,
});

}  // namespace
}  // namespace kwb
