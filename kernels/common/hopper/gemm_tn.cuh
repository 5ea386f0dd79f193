// A persistent, warp-specialised Hopper GEMM: C (m x n) = A (m x k) B^T with A [m, k] and
// B [n, k] both row-major (K contiguous: the nn.Linear layout of x and W), bf16 or fp16 operands,
// fp32 accumulators mapped element-wise by an epilogue functor, epi(col, c[row][col]) -> float,
// and stored as T (C [m, n] row-major) by TMA.
//
// Block: 3 warpgroups. Warpgroup 0 is the producer: one thread streams the A (128 x 64) and B
// (BN x 64) tiles of each K step by TMA into a `Stages`-deep ring of 128-byte-swizzled shared
// memory, completing on the stage's "full" barrier; it gives its registers up (setmaxnreg) to the
// consumers. Warpgroups 1 and 2 each own 64 rows of the 128 x BN block tile: per K step of 64
// they issue 4 wgmma m64nBNk16 straight from shared memory, keep one batch in flight, and free a
// stage (its "empty" barrier) as soon as the batch that read it has completed.
//
// Epilogue: each consumer writes its 64 x BN results, mapped and rounded to T, into a staging
// tile of shared memory laid out as the 128-byte swizzle (conflict-free: the 8 rows a warp
// writes at once land in 8 different 16-byte chunks), and one thread hands it to TMA stores;
// the consumers go on to the next tile while the copy engine writes C. The staging tile is
// rewritten only once the previous tile's stores have read it.
//
// Persistent: the grid is the fewest blocks (at most one per SM) that still finish the tiles in
// the same number of rounds, each walking the tiles gridDim.x apart, so the producer fills the
// ring for the next tile while the consumers run the current tile's epilogue. Tiles are visited
// in groups of `group_m` tile rows, so that the blocks in flight share A and B tiles in L2.
//
// Clusters (ClusterM = 2): the two blocks of a cluster take adjacent tile rows of one tile column
// and so need the same B tile; each loads half of it by TMA multicast into both blocks' rings,
// which halves the B traffic from L2. A stage is then refilled only when the consumers of both
// blocks have freed it (its empty barrier counts 2 x 2 arrivals, given across the cluster).
//
// Edges: TMA zero-fills loads past m, n and k and clips stores past m and n. k and n times
// sizeof(T) must be multiples of 16 (TMA's row-stride rule).
#pragma once

#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "harness/catalogue/device_types.cuh"
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
  // The epilogue's staging tile: 128 x BN of T, as BN / 64 boxes of 128 rows x 128 bytes.
  static constexpr int kStoreBoxCols = kSwizzleBytes / static_cast<int>(sizeof(T));
  static constexpr int kStagingBytes = kGemmBlockM * BN * static_cast<int>(sizeof(T));
  // The ring, the staging tile, 2 barriers per stage; 1024 bytes of slack to align to a swizzle atom.
  static constexpr int kSmemBytes = Stages * kStageBytes + kStagingBytes + 2 * Stages * 8 + kAtomBytes;
  static_assert(kSmemBytes <= 227 * 1024, "the ring and the staging tile must fit in shared memory");
  static_assert(sizeof(T) == 2, "16-bit operands (tf32 would need rounding before the tensor cores)");
  static_assert(BN % 64 == 0 && BN <= 256, "BN: a wgmma width up to 256 (and a TMA box of at most 256 rows)");
};

// The 128 threads of consumer warpgroup `consumer` meet (named barriers 1 and 2).
__device__ __forceinline__ void consumer_sync(int consumer) { named_barrier_sync(consumer + 1, 128); }

// Two 16-bit values as one 32-bit word, the first in the low half (the lower address).
template <class T>
__device__ __forceinline__ std::uint32_t pack_pair(T lo, T hi) {
  static_assert(sizeof(T) == 2, "16-bit values");
  std::uint16_t l, h;
  memcpy(&l, &lo, 2);
  memcpy(&h, &hi, 2);
  return static_cast<std::uint32_t>(l) | static_cast<std::uint32_t>(h) << 16;
}

// The deepest ring that fits beside the staging tile in 227 KB.
template <class T, int BN>
constexpr int max_gemm_stages() {
  constexpr int fixed = GemmTn<T, BN, 1>::kSmemBytes - GemmTn<T, BN, 1>::kStageBytes - 16;
  return (227 * 1024 - fixed) / (GemmTn<T, BN, 1>::kStageBytes + 16);
}

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
                             const __grid_constant__ CUtensorMap c_map, int k, GemmTiles tiles, Epilogue epi) {
  using Cfg = GemmTn<T, BN, Stages>;
  static_assert(ClusterM == 1 || ClusterM == 2, "clusters of 1 or 2 blocks along M");
  extern __shared__ unsigned char smem_raw[];
  // 128-byte swizzle atoms must start on 1024-byte boundaries (the same offset in every block of
  // a cluster, which multicast relies on).
  unsigned char* ring = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + kAtomBytes - 1) & ~std::uintptr_t{kAtomBytes - 1});
  unsigned char* staging = ring + Stages * Cfg::kStageBytes;
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(staging + Cfg::kStagingBytes);
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
      prefetch_tensor_map(&c_map);
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

      // Epilogue (the accumulator layout of wgmma.cuh): this warpgroup's 64 rows of the tile go
      // to rows 64 * consumer .. of the staging tile; each 64-column box is 64 rows of 128 bytes
      // whose 16-byte chunks are XOR-swizzled by the row's index in its 8-row atom.
      unsigned char* my_staging = staging + consumer * 64 * kSwizzleBytes;
      constexpr int kBoxBytes = kGemmBlockM * kSwizzleBytes;  // one box of the whole tile's rows
      if (t128 == 0) tma_store_wait_read();  // the previous tile's stores have read the staging tile
      consumer_sync(consumer);
      const int r0 = warp * 16 + lane / 4;
      const std::int64_t col0 = static_cast<std::int64_t>(tn) * BN;
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        const int col = 8 * j + 2 * (lane % 4);
        const int box = col / Cfg::kStoreBoxCols, byte = (col % Cfg::kStoreBoxCols) * static_cast<int>(sizeof(T));
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int r = r0 + 8 * half;
          const int chunk = (byte / 16) ^ (r % 8);
          const T v0 = from_float<T>(epi(col0 + col, acc[4 * j + 2 * half]));
          const T v1 = from_float<T>(epi(col0 + col + 1, acc[4 * j + 2 * half + 1]));
          *reinterpret_cast<std::uint32_t*>(my_staging + box * kBoxBytes + r * kSwizzleBytes + chunk * 16 + byte % 16) =
              pack_pair(v0, v1);
        }
      }
      fence_async_shared();  // the copy engine reads what the threads wrote
      consumer_sync(consumer);
      if (t128 == 0) {
        for (int box = 0; box < BN / Cfg::kStoreBoxCols; ++box)
          tma_store(&c_map, my_staging + box * kBoxBytes, static_cast<int>(col0) + box * Cfg::kStoreBoxCols,
                    tm * kGemmBlockM + consumer * 64);
        tma_store_commit();
      }
    }
    if (t128 == 0) tma_store_wait_all();
  }
  // No block leaves while its cluster peer may still multicast into it or signal its barriers.
  cluster_sync<ClusterM>();
}

// The tensor maps of A [m, k], B [n, k] and C [m, n]: built once (prepare()). Each block of a
// cluster of ClusterM loads BN / ClusterM rows of the B tile; each consumer stores 64 x 64 boxes.
template <class T, int BN, int ClusterM>
struct GemmTnMaps {
  static constexpr std::uint32_t kBoxCols = kSwizzleBytes / sizeof(T);
  CUtensorMap a, b, c;
  GemmTnMaps(const void* a_ptr, const void* b_ptr, void* c_ptr, ElemType type, std::int64_t m, std::int64_t n,
             std::int64_t k)
      : a(make_matrix_map(a_ptr, type, m, k, k, kGemmBlockM, kBoxCols)),
        b(make_matrix_map(b_ptr, type, n, k, k, BN / ClusterM, kBoxCols)),
        c(make_matrix_map(c_ptr, type, m, n, n, 64, kBoxCols)) {}
};

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
  // Tiles of ClusterM tile rows: an odd last tile row leaves its second block reading zeros past m
  // (and its stores clipped).
  const GemmTiles tiles{(tiles_m + ClusterM - 1) / ClusterM, static_cast<int>((n + BN - 1) / BN), group_m};

  cudaLaunchAttribute cluster_dims{};
  cluster_dims.id = cudaLaunchAttributeClusterDimension;
  cluster_dims.val.clusterDim.x = ClusterM;
  cluster_dims.val.clusterDim.y = 1;
  cluster_dims.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.attrs = &cluster_dims;
  config.numAttrs = 1;
  config.blockDim = dim3(kGemmThreads);
  config.dynamicSmemBytes = Cfg::kSmemBytes;
  config.stream = stream;
  // How many clusters are resident at once: a property of the kernel and the GPU (a worker owns
  // one), asked once rather than before every launch.
  static const int max_clusters = [&] {
    cudaLaunchConfig_t one = config;
    one.gridDim = dim3(ClusterM);
    int fit = 0;
    const cudaError_t occupancy = cudaOccupancyMaxActiveClusters(&fit, kernel, &one);
    if (occupancy != cudaSuccess || fit < 1)
      throw std::runtime_error(std::string("gemm_tn: no cluster of ") + std::to_string(ClusterM) +
                               " blocks fits: " + cudaGetErrorString(occupancy));
    return fit;
  }();
  // As many rounds as the resident clusters need, and no more clusters than those rounds need: the
  // same time for the tiles, with fewer blocks contending for L2 (2048 tiles on 132 SMs: 16
  // rounds of 128 blocks measured 3% faster than 132 blocks).
  const int rounds = (tiles.count() + max_clusters - 1) / max_clusters;
  const int clusters = (tiles.count() + rounds - 1) / rounds;
  config.gridDim = dim3(static_cast<unsigned>(clusters * ClusterM));
  const cudaError_t launched =
      cudaLaunchKernelEx(&config, kernel, maps.a, maps.b, maps.c, static_cast<int>(k), tiles, epi);
  if (launched != cudaSuccess)
    throw std::runtime_error(std::string("gemm_tn: launch: ") + cudaGetErrorString(launched));
}

}  // namespace kwb::hopper
