// Warpgroup MMA (wgmma, sm_90a): shared-memory matrix descriptors for the 128-byte swizzle the
// bulk tensor copy (tma.cuh) writes, and the fences that order a warpgroup's asynchronous MMAs.
//
// Operand tiles in shared memory are rows of 128 bytes (64 bf16/fp16 or 32 fp32 along K) written
// by a TMA copy with CU_TENSOR_MAP_SWIZZLE_128B: 8-row atoms of 1024 bytes, each atom's 16-byte
// chunks XOR-permuted by the row index. Tiles must start on 1024-byte boundaries.
//  - K-major operand (A [rows][K], or B stored [N][K]): one descriptor covers all rows of a 128-byte
//    K slice (stride between 8-row atoms: 1024 bytes). Each K step of 32 bytes (16 bf16, 8 tf32)
//    advances the start address by 32 bytes; the hardware applies the swizzle to the final address.
//  - MN-major B (V [K rows][N], N contiguous; TransB = 1): atoms of 8 K-rows x 64 N-columns; the
//    descriptor's leading offset is the distance between 64-column slabs (a separate TMA box each),
//    the stride offset the distance between 8-row groups along K (1024 bytes).
//
// Accumulator layout (m64nN, fp32): warp w of the warpgroup holds rows 16w .. 16w + 15; lane l
// holds, for each 8-column group j < N/8, d[4j + 0, 1] = (16w + l/4, 8j + 2(l%4) + {0, 1}) and
// d[4j + 2, 3] = the same columns at row + 8: the mma.sync m16n8 C layout, repeated along N.
#pragma once

#include <cstdint>

#include "kernels/common/hopper/wgmma_instructions.cuh"

namespace kwb::hopper {

inline constexpr int kSwizzleBytes = 128;  // one operand row along K
inline constexpr int kAtomBytes = 8 * kSwizzleBytes;

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// Descriptor of a 128-byte-swizzled tile at `smem` (1024-byte aligned, or offset from such a base
// by whole K steps). leading_bytes matters only for MN-major operands.
__device__ __forceinline__ std::uint64_t smem_descriptor(const void* smem, std::uint32_t leading_bytes = 16,
                                                         std::uint32_t stride_bytes = kAtomBytes) {
  const std::uint64_t addr = smem_u32(smem);
  std::uint64_t d = (addr & 0x3FFFF) >> 4;                      // bits 0-13: start address / 16
  d |= static_cast<std::uint64_t>(leading_bytes >> 4) << 16;    // bits 16-29: leading byte offset / 16
  d |= static_cast<std::uint64_t>(stride_bytes >> 4) << 32;     // bits 32-45: stride byte offset / 16
  d |= std::uint64_t{1} << 62;                                  // bits 62-63: 1 = 128-byte swizzle
  return d;
}

// Before the first wgmma of a batch: orders the warpgroup's register and shared-memory writes
// (accumulators, an A fragment) before the asynchronous MMAs read them.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

// Closes the batch of wgmmas issued since the last commit into one group.
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }

// Waits until at most `Pending` committed groups are still running.
template <int Pending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}

// The compiler must not move accumulator reads or writes across a wait: tie them to it.
template <int N>
__device__ __forceinline__ void fence_accumulators(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Raises (producer warpgroups: lowers) this warpgroup's register budget; needs the kernel's
// register cap at entry (__launch_bounds__(threads, 1)).
template <int Registers>
__device__ __forceinline__ void set_register_budget_up() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Registers));
}
template <int Registers>
__device__ __forceinline__ void set_register_budget_down() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Registers));
}

}  // namespace kwb::hopper

namespace kwb::hopper {

// The A fragment of an `rs` wgmma is read asynchronously too: tie its registers to a point after
// the wait, so that the compiler keeps them (and does not reuse them) while the MMA runs.
template <int N>
__device__ __forceinline__ void fence_fragment(std::uint32_t (&a)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(a[i])::"memory");
}

}  // namespace kwb::hopper
