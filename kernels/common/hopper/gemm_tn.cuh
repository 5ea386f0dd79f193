// A persistent, warp-specialised Hopper GEMM: C (m x n) = A (m x k) B^T with A [m, k] and
// B [n, k] both row-major (K contiguous: the nn.Linear layout of x and W), bf16 or fp16 operands,
// fp32 accumulators handed to an epilogue functor epi(row, col, c[row][col], c[row][col + 1]).
//
// Block: 3 warpgroups. Warpgroup 0 is the producer: one thread streams the A (128 x 64) and B
// (BN x 64) tiles of each K step by TMA into a `Stages`-deep ring of 128-byte-swizzled shared
// memory, completing on the stage's "full" barrier; it gives its registers up (setmaxnreg) to the
// consumers. Warpgroups 1 and 2 each own 64 rows of the 128 x BN block tile: per K step of 64
// they issue 4 wgmma m64nBNk16 straight from shared memory, keep one batch in flight, and free a
// stage (its "empty" barrier) as soon as the batch that read it has completed.
//
// Persistent: one block per SM walks the tiles gridDim.x apart, so the producer fills the ring
// for the next tile while the consumers run the current tile's epilogue. Tiles are visited in
// groups of `group_m` tile rows, so that the blocks in flight share A and B tiles in L2.
//
// Clusters (ClusterM = 2): the two blocks of a cluster take adjacent tile rows of one tile column
// and so need the same B tile; each loads half of it by TMA multicast into both blocks' rings,
// which halves the B traffic from L2. A stage is then refilled only when the consumers of both
// blocks have freed it (its empty barrier counts 2 x 2 arrivals, given across the cluster).
//
// Edges: TMA zero-fills boxes past m, n and k; the epilogue skips rows and column pairs past the
// matrix (a pair that straddles n is the functor's to clip). k * sizeof(T) must be a multiple of 16 (TMA's row-stride rule).
#pragma once

#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/common/hopper/mbarrier.cuh"
#include "kernels/common/hopper/tma.cuh"
#include "kernels/common/hopper/wgmma.cuh"

namespace kwb::hopper {

inline constexpr int kGemmBlockM = 128;   // two consumer warpgroups of 64 rows
inline constexpr int kGemmThreads = 384;  // producer + 2 consumers

template <class T, int BN, int Stages>
struct GemmTn {
  static constexpr int kBlockK = kSwizzleBytes / static_cast<int>(sizeof(T));  // one swizzle row
  static constexpr int kStepK = 16;                                            // per wgmma (16-bit types)
  static constexpr int kATileBytes = kGemmBlockM * kSwizzleBytes;
  static constexpr int kBTileBytes = BN * kSwizzleBytes;
  static constexpr int kStageBytes = kATileBytes + kBTileBytes;
  // The ring, then 2 barriers per stage; 1024 bytes of slack to align the ring to a swizzle atom.
  static constexpr int kSmemBytes = Stages * kStageBytes + 2 * Stages * 8 + kAtomBytes;
  static_assert(sizeof(T) == 2, "16-bit operands (tf32 would need rounding before the tensor cores)");
  static_assert(BN % 64 == 0 && BN <= 256, "BN: a wgmma width up to 256 (and a TMA box of at most 256 rows)");
};

struct GemmTiles {
  int tiles_m, tiles_n, group_m;
  // Tile t -> (tile row, tile col): group_m tile rows at a time, walking down a group's column
  // before moving right.
  __device__ __forceinline__ void locate(int t, int& tm, int& tn) const {
    const int per_group = group_m * tiles_n;
    const int first_m = (t / per_group) * group_m;
    const int rows_here = min(tiles_m - first_m, group_m);
    tm = first_m + (t % per_group) % rows_here;
    tn = (t % per_group) / rows_here;
  }
  __host__ __device__ __forceinline__ int count() const { return tiles_m * tiles_n; }
};

template <class T, int BN, int Stages, int ClusterM, class Epilogue>
__global__ void __launch_bounds__(kGemmThreads, 1)
    gemm_tn_warp_specialized(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                             int m, int n, int k, GemmTiles tiles, Epilogue epi) {
  using Cfg = GemmTn<T, BN, Stages>;
  static_assert(ClusterM == 1 || ClusterM == 2, "clusters of 1 or 2 blocks along M");
  extern __shared__ unsigned char smem_raw[];
  // 128-byte swizzle atoms must start on 1024-byte boundaries (the same offset in every block of
  // a cluster, which multicast relies on).
  unsigned char* ring = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + kAtomBytes - 1) & ~std::uintptr_t{kAtomBytes - 1});
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(ring + Stages * Cfg::kStageBytes);
  std::uint64_t* empty = full + Stages;
  const auto a_tile = [&](int s) { return ring + s * Cfg::kStageBytes; };
  const auto b_tile = [&](int s) { return ring + s * Cfg::kStageBytes + Cfg::kATileBytes; };

  const int warpgroup = threadIdx.x / 128;
  const int k_tiles = (k + Cfg::kBlockK - 1) / Cfg::kBlockK;
  // The blocks of a cluster take adjacent tile rows of one tile column: they share its B tile,
  // each loading half of it for both (multicast), and walk the tiles in step.
  const int rank = ClusterM == 1 ? 0 : static_cast<int>(cluster_ctarank());
  const int cluster = blockIdx.x / ClusterM, clusters = gridDim.x / ClusterM;
  if (threadIdx.x == 0) {
    for (int s = 0; s < Stages; ++s) {
      mbar_init(&full[s], 1);                // the producer's arrive_expect_tx; the bytes complete it
      mbar_init(&empty[s], 2 * ClusterM);    // each consumer warpgroup of each block of the cluster
    }
    fence_barrier_init();
  }
  cluster_sync<ClusterM>();  // barriers ready before any block of the cluster signals them

  if (warpgroup == 0) {
    set_register_budget_down<40>();
    if (threadIdx.x == 0) {
      prefetch_tensor_map(&a_map);
      prefetch_tensor_map(&b_map);
      RingPosition<Stages> pos;
      for (int t = cluster; t < tiles.count(); t += clusters) {
        int tm, tn;
        tiles.locate(t, tm, tn);
        tm = tm * ClusterM + rank;
        for (int kt = 0; kt < k_tiles; ++kt, pos.advance()) {
          // Free in every block of the cluster (a fresh ring passes: its "previous" phase is done).
          mbar_wait(&empty[pos.slot], pos.phase ^ 1);
          mbar_arrive_expect_tx(&full[pos.slot], Cfg::kStageBytes);
          tma_load(a_tile(pos.slot), &a_map, &full[pos.slot], kt * Cfg::kBlockK, tm * kGemmBlockM);
          constexpr int kRows = BN / ClusterM;
          unsigned char* b_part = b_tile(pos.slot) + rank * kRows * kSwizzleBytes;
          if constexpr (ClusterM == 1)
            tma_load(b_part, &b_map, &full[pos.slot], kt * Cfg::kBlockK, tn * BN);
          else
            tma_load_multicast(b_part, &b_map, &full[pos.slot], (1u << ClusterM) - 1, kt * Cfg::kBlockK,
                               tn * BN + rank * kRows);
        }
      }
    }
  } else {
    set_register_budget_up<232>();
    const int consumer = warpgroup - 1;  // rows 64 * consumer .. + 63 of the block tile
    const int t128 = threadIdx.x % 128, warp = t128 / 32, lane = t128 % 32;
    const auto release = [&](int slot) {
      if (t128 != 0) return;
      if constexpr (ClusterM == 1)
        mbar_arrive(&empty[slot]);
      else
        for (int r = 0; r < ClusterM; ++r) mbar_arrive_cluster(&empty[slot], r);
    };
    RingPosition<Stages> pos;
    float acc[BN / 2];
    for (int t = cluster; t < tiles.count(); t += clusters) {
      int tm, tn;
      tiles.locate(t, tm, tn);
      tm = tm * ClusterM + rank;
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
      int held_slot = -1;  // the stage the in-flight batch reads
      for (int kt = 0; kt < k_tiles; ++kt, pos.advance()) {
        mbar_wait(&full[pos.slot], pos.phase);
        wgmma_fence();
        const unsigned char* a = a_tile(pos.slot) + consumer * 64 * kSwizzleBytes;
        const unsigned char* b = b_tile(pos.slot);
#pragma unroll
        for (int ks = 0; ks < Cfg::kBlockK / Cfg::kStepK; ++ks)
          Wgmma<BN, T>::ss(acc, smem_descriptor(a + ks * 32), smem_descriptor(b + ks * 32), 1);
        wgmma_commit();
        // The previous batch is done once at most this one is pending: its stage is free.
        wgmma_wait<1>();
        fence_accumulators(acc);
        if (held_slot >= 0) release(held_slot);
        held_slot = pos.slot;
      }
      wgmma_wait<0>();
      fence_accumulators(acc);
      if (held_slot >= 0) release(held_slot);

      // Epilogue: the accumulator layout of wgmma.cuh, rows past m skipped.
      const std::int64_t row0 = static_cast<std::int64_t>(tm) * kGemmBlockM + consumer * 64 + warp * 16 + lane / 4;
      const std::int64_t col0 = static_cast<std::int64_t>(tn) * BN + 2 * (lane % 4);
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        const std::int64_t col = col0 + 8 * j;
        if (col >= n) continue;
        if (row0 < m) epi(row0, col, acc[4 * j], acc[4 * j + 1]);
        if (row0 + 8 < m) epi(row0 + 8, col, acc[4 * j + 2], acc[4 * j + 3]);
      }
    }
  }
  // No block leaves while its cluster peer may still multicast into it or signal its barriers.
  cluster_sync<ClusterM>();
}

// The tensor maps of A [m, k] and B [n, k]: built once (prepare()). Each block of a cluster of
// ClusterM loads BN / ClusterM rows of the B tile.
template <class T, int BN, int ClusterM>
struct GemmTnMaps {
  CUtensorMap a, b;
  GemmTnMaps(const void* a_ptr, const void* b_ptr, ElemType type, std::int64_t m, std::int64_t n, std::int64_t k)
      : a(make_matrix_map(a_ptr, type, m, k, k, kGemmBlockM, kSwizzleBytes / sizeof(T))),
        b(make_matrix_map(b_ptr, type, n, k, k, BN / ClusterM, kSwizzleBytes / sizeof(T))) {}
};

// One block per SM (as many clusters as fit), each walking its share of the tiles.
template <class T, int BN, int Stages, int ClusterM, class Epilogue>
void launch_gemm_tn(const GemmTnMaps<T, BN, ClusterM>& maps, std::int64_t m, std::int64_t n, std::int64_t k,
                    int group_m, Epilogue epi, cudaStream_t stream) {
  using Cfg = GemmTn<T, BN, Stages>;
  auto* kernel = &gemm_tn_warp_specialized<T, BN, Stages, ClusterM, Epilogue>;
  static const cudaError_t attribute =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes);
  if (attribute != cudaSuccess)
    throw std::runtime_error(std::string("gemm_tn: cudaFuncSetAttribute: ") + cudaGetErrorString(attribute));
  const int tiles_m = static_cast<int>((m + kGemmBlockM - 1) / kGemmBlockM);
  // Tiles of ClusterM tile rows: an odd last tile row leaves its second block reading zeros past m.
  const GemmTiles tiles{(tiles_m + ClusterM - 1) / ClusterM, static_cast<int>((n + BN - 1) / BN), group_m};

  cudaLaunchConfig_t config{};
  cudaLaunchAttribute cluster_dims{};
  cluster_dims.id = cudaLaunchAttributeClusterDimension;
  cluster_dims.val.clusterDim.x = ClusterM;
  cluster_dims.val.clusterDim.y = 1;
  cluster_dims.val.clusterDim.z = 1;
  config.attrs = &cluster_dims;
  config.numAttrs = 1;
  config.blockDim = dim3(kGemmThreads);
  config.dynamicSmemBytes = Cfg::kSmemBytes;
  config.stream = stream;
  config.gridDim = dim3(ClusterM);
  int max_clusters = 0;
  const cudaError_t occupancy = cudaOccupancyMaxActiveClusters(&max_clusters, kernel, &config);
  if (occupancy != cudaSuccess || max_clusters < 1)
    throw std::runtime_error(std::string("gemm_tn: no cluster of ") + std::to_string(ClusterM) +
                             " blocks fits: " + cudaGetErrorString(occupancy));
  config.gridDim = dim3(static_cast<unsigned>(std::min(tiles.count(), max_clusters) * ClusterM));
  const cudaError_t launched = cudaLaunchKernelEx(&config, kernel, maps.a, maps.b, static_cast<int>(m),
                                                  static_cast<int>(n), static_cast<int>(k), tiles, epi);
  if (launched != cudaSuccess)
    throw std::runtime_error(std::string("gemm_tn: launch: ") + cudaGetErrorString(launched));
}

}  // namespace kwb::hopper
