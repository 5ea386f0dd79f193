// Shared-memory barriers (mbarrier) of the Hopper pipelines: a producer's bulk copies complete
// on a "full" barrier by the bytes they deliver; consumers free a stage on its "empty" barrier by
// arriving. Each barrier flips its phase bit when its count and transaction bytes are both met;
// waiters pass the parity of the phase they wait for.
#pragma once

#include <cstdint>

#include "kernels/common/hopper/wgmma.cuh"

namespace kwb::hopper {

__device__ __forceinline__ void mbar_init(std::uint64_t* bar, std::uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(arrivals));
}

// Makes initialised barriers visible to the copy engine and to the cluster's other blocks.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// One arrival that also announces `bytes` of copies completing on this barrier.
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}

// Arrives on the barrier at the same offset in block `cta_rank` of the cluster (itself included).
__device__ __forceinline__ void mbar_arrive_cluster(std::uint64_t* bar, std::uint32_t cta_rank) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_u32(bar)),
      "r"(cta_rank)
      : "memory");
}

// Spins until the barrier has completed the phase of parity `phase`.
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, std::uint32_t phase) {
  asm volatile(
      "{\n.reg .pred done;\nwait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n}\n" ::"r"(smem_u32(bar)),
      "r"(phase)
      : "memory");
}

// This block's rank in its cluster.
__device__ __forceinline__ std::uint32_t cluster_ctarank() {
  std::uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

// Every thread of every block of the cluster meets here (a __syncthreads for ClusterM == 1);
// release/acquire: shared-memory writes before it are visible to the cluster after it.
template <int ClusterM>
__device__ __forceinline__ void cluster_sync() {
  if constexpr (ClusterM == 1) {
    __syncthreads();
  } else {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
  }
}

// Named barriers (ids 1-15; 0 is __syncthreads) among `threads` threads of the block, a multiple
// of 32: sync waits for all of them, arrive counts this thread in and goes on.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// A stage ring's position: the slot and the parity its barriers are waited on with.
template <int Stages>
struct RingPosition {
  int slot = 0;
  std::uint32_t phase = 0;
  __device__ __forceinline__ void advance() {
    if (++slot == Stages) {
      slot = 0;
      phase ^= 1;
    }
  }
};

}  // namespace kwb::hopper
