// Block-sparse attention in the flash kernels (fused_v1's flash_fwd_v1.cuh, fused_v2's
// flash_fwd_v2.cuh): a block of query rows, inside one query block of the mask, lists the key tiles
// whose key block its mask row keeps, once, before its loop, so that the loop (and fused_v2's TMA
// producer) visits only those: a dropped block costs neither loads nor GEMMs.
#pragma once

#include <cstdint>

#include "kernels/attention_fwd/attention_params.cuh"

namespace kwb {
namespace flash {

// The list of the key tiles a block visits (uint16 each) and their flags (a byte each), in shared
// memory after the kernel's ring (fused_v1) or its barriers (fused_v2), for every key tile of the sequence. kMaxListedTiles keeps
// fused_v1's largest ring plus the list within an SM's 227 KiB (224 KiB + 3 KiB).
constexpr int kMaxListedTiles = 1024;
template <int BN>
__host__ __device__ constexpr int tile_list_bytes(std::int64_t seq) {
  return static_cast<int>(3 * (((seq + BN - 1) / BN + 15) / 16 * 16));
}

// Fills list[0 .. n) with the key tiles of [tile_begin, tile_begin + dense_tiles) whose key block
// the block mask keeps for this query tile (one query block: block % BM == 0), as offsets from
// tile_begin, ascending; returns n (0: the rows see no key). Every thread flags a share of the
// tiles, then each warp counts the flags with ballots (warp 0 also writes the list): at 1024
// tiles, 32 rounds of a shared-memory read and a ballot.
template <int BN, int kThreads>
__device__ __forceinline__ int list_kept_tiles(const AttentionParams& p, std::int64_t batch, std::int64_t head,
                                               std::int64_t q0, std::int64_t tile_begin, int dense_tiles,
                                               std::uint16_t* list, std::uint8_t* flags) {
  const std::uint8_t* row = p.block_mask_row(batch, head, q0 / p.block);
  for (int t = static_cast<int>(threadIdx.x); t < dense_tiles; t += kThreads)
    flags[t] = row[(tile_begin + t) * BN / p.block] != 0;
  __syncthreads();
  const int lane = static_cast<int>(threadIdx.x % 32);
  int n = 0;
  for (int base = 0; base < dense_tiles; base += 32) {
    const bool kept = base + lane < dense_tiles && flags[base + lane];
    const unsigned ballot = __ballot_sync(0xffffffffu, kept);
    if (threadIdx.x < 32 && kept) list[n + __popc(ballot & ((1u << lane) - 1))] = static_cast<std::uint16_t>(base + lane);
    n += __popc(ballot);
  }
  __syncthreads();  // the list is written before any thread reads it
  return n;
}

}  // namespace flash
}  // namespace kwb
