// The mma.sync GEMM mainloop the matrix-bound ops share: C = A B^T with A [m, k] and B [n, k]
// row-major (K contiguous in both: x and an nn.Linear weight W [out, in]), fp32 accumulation,
// and the output handed to an EPILOGUE functor, so each op writes its own y (bias + ReLU,
// SwiGLU, ...) straight from the accumulators:
//
//   epilogue(row, col, v0, v1)   v0 = C[row, col], v1 = C[row, col + 1]; called for every
//                                row < m and even col < n (col + 1 may be n: the functor must
//                                not write it), from the thread whose registers hold them.
//
// Operands: bf16 and fp16 run mma.sync m16n8k16 (fragments through ldmatrix); fp32 runs
// mma.sync m16n8k8 tf32 (operands rounded to tf32 with cvt.rna, fragments by 32-bit shared
// loads), so a variant using it for fp32 says tf32 in its name.
//
// Structure (one block per BM x BN tile of C, WARPS_M x WARPS_N warps of WM x WN each):
//   - a ring of STAGES shared-memory stages, each an A tile (BM, BK) and a B tile (BN, BK), rows
//     padded by 16 bytes so that ldmatrix's 8 row addresses (and the tf32 fragment loads) fall
//     in distinct banks;
//   - cp.async 16-byte copies, STAGES - 1 K tiles in flight: wait for tile t, one
//     __syncthreads, issue tile t + STAGES - 1 into the stage tile t - 1 used (every warp is past
//     it: the barrier), then the MMAs on tile t;
//   - edges: a vector past m, n or k is zero-filled (cp.async with 0 source bytes, nothing
//     read); when k is not a multiple of the vector (8 bf16/fp16, 4 fp32) rows are not 16-byte
//     aligned, and every vector is gathered element by element with bounds checks and stored to
//     shared memory directly (visible at the barrier before its tile is used): slow, correct;
//   - blocks walk the tiles of C in groups of 8 tile rows (tile row fastest), so the blocks
//     resident at once share A rows and B rows in L2.
// Deterministic: every output is one fp32 sum in a fixed order; no atomics.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace kwb {

template <int BM_, int BN_, int BK_, int WARPS_M_, int WARPS_N_, int STAGES_>
struct MmaTileConfig {
  static constexpr int BM = BM_, BN = BN_, BK = BK_;  // block tile (BM, BN), K tile BK
  static constexpr int WARPS_M = WARPS_M_, WARPS_N = WARPS_N_, STAGES = STAGES_;
  static constexpr int kThreads = WARPS_M * WARPS_N * 32;
  static constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;  // warp tile (WM, WN)
  static constexpr int MT = WM / 16, NT = WN / 8;              // mma tiles per warp
  static_assert(WM % 16 == 0 && WN % 16 == 0, "warp tile: multiples of 16 (NT even for paired ldmatrix)");
};

// d += A (16 x 16) B (16 x 8), inputs in T (bf16 or fp16), fp32 accumulate: the mma.sync every
// m16n8k16 kernel issues (this mainloop, the flash attention kernels).
template <class T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                          std::uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

namespace mma_detail {

template <class T>
struct Operand {
  static constexpr bool kTf32 = std::is_same_v<T, float>;
  static constexpr int kK = kTf32 ? 8 : 16;          // K of one mma
  static constexpr int kVec = 16 / sizeof(T);        // elements per 16-byte copy
  static constexpr int kPad = kVec;                  // 16 bytes of row padding
};

template <class T, class Cfg>
constexpr int row_stride() {
  return Cfg::BK + Operand<T>::kPad;  // elements per shared row
}
template <class T, class Cfg>
constexpr int stage_elems() {
  return (Cfg::BM + Cfg::BN) * row_stride<T, Cfg>();  // A (BM, BK + pad) then B (BN, BK + pad)
}
template <class T, class Cfg>
constexpr int smem_bytes() {
  return Cfg::STAGES * stage_elems<T, Cfg>() * static_cast<int>(sizeof(T));
}

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, int src_bytes) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* smem) {
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

__device__ __forceinline__ void mma_1688_tf32(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                              std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// fp32 -> tf32, round to nearest (ties away), as cuBLAS's tf32 path rounds.
__device__ __forceinline__ std::uint32_t to_tf32(float v) {
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(v));
  return r;
}

// One 16-byte vector of row `row` (of `rows`), elements [col, col + kVec) of `cols`, into shared
// memory at dst. `aligned`: cols % kVec == 0, so a vector that starts inside the row ends inside.
template <class T>
__device__ __forceinline__ void load_vector(T* dst, const T* __restrict__ src, std::int64_t row, std::int64_t rows,
                                            std::int64_t col, std::int64_t cols, bool aligned) {
  constexpr int kVec = Operand<T>::kVec;
  if (row >= rows || col >= cols) {
    cp_async16(dst, src, 0);  // zero fill; the address is valid and nothing is read
  } else if (aligned) {
    cp_async16(dst, src + row * cols + col, 16);
  } else {
    // Unaligned rows: gather with bounds, zeros past the row's end.
    alignas(16) T v[kVec];
#pragma unroll
    for (int i = 0; i < kVec; ++i) v[i] = col + i < cols ? src[row * cols + col + i] : T(0.0f);
    *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(v);
  }
}

// The MMAs of one K step (Operand<T>::kK wide, at column kk of the stage) for one warp.
template <class T, class Cfg>
__device__ __forceinline__ void warp_mma_step(float (&acc)[Cfg::MT][Cfg::NT][4], const T* as, const T* bs,
                                              int warp_m, int warp_n, int lane, int kk) {
  constexpr int LDS = row_stride<T, Cfg>();
  std::uint32_t af[Cfg::MT][4], bf[Cfg::NT][2];
  if constexpr (Operand<T>::kTf32) {
    // m16n8k8 tf32: a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4); b0 (k t, n g), b1 (k t + 4).
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int mt = 0; mt < Cfg::MT; ++mt) {
      const T* p = as + (warp_m * Cfg::WM + mt * 16 + g) * LDS + kk + t;
      af[mt][0] = to_tf32(p[0]);
      af[mt][1] = to_tf32(p[8 * LDS]);
      af[mt][2] = to_tf32(p[4]);
      af[mt][3] = to_tf32(p[8 * LDS + 4]);
    }
#pragma unroll
    for (int nt = 0; nt < Cfg::NT; ++nt) {
      const T* q = bs + (warp_n * Cfg::WN + nt * 8 + g) * LDS + kk + t;
      bf[nt][0] = to_tf32(q[0]);
      bf[nt][1] = to_tf32(q[4]);
    }
#pragma unroll
    for (int mt = 0; mt < Cfg::MT; ++mt)
#pragma unroll
      for (int nt = 0; nt < Cfg::NT; ++nt) mma_1688_tf32(acc[mt][nt], af[mt], bf[nt][0], bf[nt][1]);
  } else {
    // A (16 x 16): lanes 0-15 address rows 0-15 at k 0, lanes 16-31 rows 0-15 at k 8, giving
    // a0 (rows 0-7, k 0-7), a1 (rows 8-15, k 0-7), a2 (rows 0-7, k 8-15), a3 (rows 8-15, k 8-15).
#pragma unroll
    for (int mt = 0; mt < Cfg::MT; ++mt)
      ldmatrix_x4(af[mt], as + (warp_m * Cfg::WM + mt * 16 + (lane & 15)) * LDS + kk + (lane >> 4) * 8);
    // B, two n8 tiles per ldmatrix.x4 (B stored [n][k] is the "col" operand as is): lanes 0-7
    // n 0-7 at k 0 (b0 of nt), 8-15 n 0-7 at k 8 (b1 of nt), 16-23 n 8-15 at k 0, 24-31 at k 8.
#pragma unroll
    for (int nt = 0; nt < Cfg::NT; nt += 2) {
      std::uint32_t r[4];
      ldmatrix_x4(r, bs + (warp_n * Cfg::WN + nt * 8 + (lane & 7) + (lane >> 4) * 8) * LDS + kk +
                         ((lane >> 3) & 1) * 8);
      bf[nt][0] = r[0];
      bf[nt][1] = r[1];
      bf[nt + 1][0] = r[2];
      bf[nt + 1][1] = r[3];
    }
#pragma unroll
    for (int mt = 0; mt < Cfg::MT; ++mt)
#pragma unroll
      for (int nt = 0; nt < Cfg::NT; ++nt) mma_16816<T>(acc[mt][nt], af[mt], bf[nt][0], bf[nt][1]);
  }
}

}  // namespace mma_detail

template <class T, class Cfg, class Epilogue>
__global__ void __launch_bounds__(Cfg::kThreads)
    mma_gemm_kernel(const T* __restrict__ a, const T* __restrict__ b, std::int64_t m, std::int64_t n, std::int64_t k,
                    Epilogue epilogue) {
  using Op = mma_detail::Operand<T>;
  constexpr int LDS = mma_detail::row_stride<T, Cfg>();
  constexpr int kStage = mma_detail::stage_elems<T, Cfg>();
  constexpr int kVecsPerRow = Cfg::BK / Op::kVec;
  constexpr int kAIters = Cfg::BM * kVecsPerRow / Cfg::kThreads;  // 16-byte copies per thread per stage
  constexpr int kBIters = Cfg::BN * kVecsPerRow / Cfg::kThreads;
  static_assert(kAIters * Cfg::kThreads == Cfg::BM * kVecsPerRow, "A tile: whole copies per thread");
  static_assert(kBIters * Cfg::kThreads == Cfg::BN * kVecsPerRow, "B tile: whole copies per thread");
  static_assert(Cfg::BK % Op::kK == 0, "K tile: whole mma steps");
  extern __shared__ __align__(16) unsigned char mma_smem[];
  T* smem = reinterpret_cast<T*>(mma_smem);

  // Tile of C, grouped: 8 tile rows share each tile column in turn (L2 reuse of B and of A).
  constexpr std::int64_t kGroup = 8;
  const std::int64_t tiles_m = (m + Cfg::BM - 1) / Cfg::BM, tiles_n = (n + Cfg::BN - 1) / Cfg::BN;
  const std::int64_t pid = blockIdx.x, per_group = kGroup * tiles_n;
  const std::int64_t first_m = pid / per_group * kGroup;
  const std::int64_t group_m = std::min(tiles_m - first_m, kGroup);
  const std::int64_t tile_m = first_m + (pid % per_group) % group_m, tile_n = (pid % per_group) / group_m;
  const std::int64_t row0 = tile_m * Cfg::BM, col0 = tile_n * Cfg::BN;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int warp_m = warp / Cfg::WARPS_N, warp_n = warp % Cfg::WARPS_N;
  const bool aligned = k % Op::kVec == 0;
  const std::int64_t k_tiles = (k + Cfg::BK - 1) / Cfg::BK;

  auto load_stage = [&](int stage, std::int64_t k0) {
    T* as = smem + stage * kStage;  // (BM, LDS)
    T* bs = as + Cfg::BM * LDS;     // (BN, LDS)
#pragma unroll
    for (int i = 0; i < kAIters; ++i) {
      const int v = tid + i * Cfg::kThreads, r = v / kVecsPerRow, c = v % kVecsPerRow * Op::kVec;
      mma_detail::load_vector(as + r * LDS + c, a, row0 + r, m, k0 + c, k, aligned);
    }
#pragma unroll
    for (int i = 0; i < kBIters; ++i) {
      const int v = tid + i * Cfg::kThreads, r = v / kVecsPerRow, c = v % kVecsPerRow * Op::kVec;
      mma_detail::load_vector(bs + r * LDS + c, b, col0 + r, n, k0 + c, k, aligned);
    }
  };

#pragma unroll
  for (int s = 0; s < Cfg::STAGES - 1; ++s) {
    if (s < k_tiles) load_stage(s, s * std::int64_t{Cfg::BK});
    mma_detail::cp_async_commit();  // empty groups keep the wait count uniform
  }
  float acc[Cfg::MT][Cfg::NT][4] = {};
  for (std::int64_t t = 0; t < k_tiles; ++t) {
    mma_detail::cp_async_wait<Cfg::STAGES - 2>();
    __syncthreads();
    const std::int64_t next = t + Cfg::STAGES - 1;
    if (next < k_tiles) load_stage(static_cast<int>(next % Cfg::STAGES), next * Cfg::BK);
    mma_detail::cp_async_commit();
    const T* as = smem + static_cast<int>(t % Cfg::STAGES) * kStage;
    const T* bs = as + Cfg::BM * LDS;
#pragma unroll
    for (int kk = 0; kk < Cfg::BK; kk += Op::kK)
      mma_detail::warp_mma_step<T, Cfg>(acc, as, bs, warp_m, warp_n, lane, kk);
  }
  mma_detail::cp_async_wait<0>();  // leave no copy in flight at exit

  // Accumulator layout (both mma shapes): c0, c1 at row g, cols 2t, 2t + 1; c2, c3 at row g + 8.
  const int g = lane >> 2, tq = lane & 3;
#pragma unroll
  for (int mt = 0; mt < Cfg::MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < Cfg::NT; ++nt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const std::int64_t row = row0 + warp_m * Cfg::WM + mt * 16 + g + half * 8;
        const std::int64_t col = col0 + warp_n * Cfg::WN + nt * 8 + tq * 2;
        if (row < m && col < n) epilogue(row, col, acc[mt][nt][2 * half], acc[mt][nt][2 * half + 1]);
      }
}

// Whether a configuration's ring fits the 227 KB of shared memory an H100 block may have.
template <class T, class Cfg>
constexpr bool mma_gemm_fits() {
  return mma_detail::smem_bytes<T, Cfg>() <= 227 * 1024;
}

// C = A B^T through `epilogue`, A [m, k], B [n, k] row-major (leading dimension k).
template <class T, class Cfg, class Epilogue>
void launch_mma_gemm(const T* a, const T* b, std::int64_t m, std::int64_t n, std::int64_t k, Epilogue epilogue,
                     cudaStream_t stream) {
  static_assert(mma_gemm_fits<T, Cfg>(), "the stage ring exceeds 227 KB of shared memory");
  constexpr int kSmem = mma_detail::smem_bytes<T, Cfg>();
  auto kernel = mma_gemm_kernel<T, Cfg, Epilogue>;
  // Above 48 KB of dynamic shared memory a kernel must opt in (cheap, idempotent).
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  const std::int64_t blocks = ((m + Cfg::BM - 1) / Cfg::BM) * ((n + Cfg::BN - 1) / Cfg::BN);
  if (blocks > 0x7fffffff) throw std::invalid_argument("mma_gemm: too many tiles for one grid");
  kernel<<<static_cast<unsigned>(blocks), Cfg::kThreads, kSmem, stream>>>(a, b, m, n, k, epilogue);
}

// The tile configurations a variant's "tile" tunable names (the help string below lists them),
// and the launch of the one asked for with `stages` (shortened to what fits 227 KB).
inline constexpr const char* kMmaTileHelp =
    "block tile: 1 = 128x128x32, 8 warps of 64x32; 2 = 128x256x32, 8 warps of 64x64; "
    "3 = 64x128x32, 4 warps of 32x64";

template <class T, int BM, int BN, int BK, int WM_, int WN_, class Epilogue>
void launch_mma_gemm_stages(std::int64_t stages, const T* a, const T* b, std::int64_t m, std::int64_t n,
                            std::int64_t k, Epilogue epilogue, cudaStream_t stream) {
  using S4 = MmaTileConfig<BM, BN, BK, WM_, WN_, 4>;
  using S3 = MmaTileConfig<BM, BN, BK, WM_, WN_, 3>;
  if constexpr (mma_gemm_fits<T, S4>())
    if (stages >= 4) return launch_mma_gemm<T, S4>(a, b, m, n, k, epilogue, stream);
  launch_mma_gemm<T, S3>(a, b, m, n, k, epilogue, stream);
}

template <class T, class Epilogue>
void launch_mma_gemm_tuned(std::int64_t tile, std::int64_t stages, const T* a, const T* b, std::int64_t m,
                           std::int64_t n, std::int64_t k, Epilogue epilogue, cudaStream_t stream) {
  switch (tile) {
    case 1: return launch_mma_gemm_stages<T, 128, 128, 32, 2, 4>(stages, a, b, m, n, k, epilogue, stream);
    case 2: return launch_mma_gemm_stages<T, 128, 256, 32, 2, 4>(stages, a, b, m, n, k, epilogue, stream);
    case 3: return launch_mma_gemm_stages<T, 64, 128, 32, 2, 2>(stages, a, b, m, n, k, epilogue, stream);
  }
  throw std::invalid_argument("mma_gemm: no tile configuration " + std::to_string(tile) + " (" + kMmaTileHelp + ")");
}

}  // namespace kwb
