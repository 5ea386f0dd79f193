// The FlashAttention-3-style forward kernel of fused_v2 (see fused_v2_wgmma_tma_sm90a.cu for the
// why and the napkin math), sm_90a only: one block per (query tile of 128 rows, head, batch), three
// warpgroups of 128 threads.
//   - warpgroup 0, the producer: gives its registers away (setmaxnreg down to 24) and one thread
//     issues every bulk tensor copy: Q once, then K and V tiles of BN keys into a 2- to 4-stage ring,
//     each landing on its own "full" barrier; it refills a K stage once both consumers' S = Q K^T
//     has read it, and a V stage once their P V has (separate "empty" barriers: a K tile is free
//     a whole softmax earlier than its V tile).
//   - warpgroups 1 and 2, the consumers (setmaxnreg up to 240): each owns 64 query rows (16 per
//     warp) and per key tile computes S (64 x BN) = Q K^T by wgmma from shared memory, the
//     online softmax on the accumulators in registers (flash_softmax.cuh), then O (64 x D) += P V
//     by wgmma with P straight from registers and V from shared memory (MN-major B).
//     kOverlap = false (tunable tiles_in_flight = 1) runs the steps in that order; true (2)
//     issues the next tile's S before this tile's P V and runs the next softmax while P V is on
//     the tensor cores (FlashAttention-3's intra-warpgroup overlap), and the two consumers take
//     turns issuing their GEMMs (FlashAttention-3's ping-pong, two named barriers), so that one's
//     softmax runs while the other's GEMMs hold the tensor cores: the exponentials (one per score,
//     against 4 d FLOPs of MMA; MUFU does 16 a clock per SM) would otherwise leave the tensor
//     cores idle for about a third of each tile.
//
// Shared memory, every tile a stack of 64-column slabs of 128-byte rows in the TMA's 128-byte
// swizzle (what wgmma descriptors read), each slab 1024-byte aligned:
//   Q    (D/64, 128, 64)        K ring (stages, D/64, BN, 64)     V ring (stages, D/64, BN, 64)
//   barriers: q_full, then k_full, v_full, k_empty, v_empty per stage
//   then, under a block mask, the list of kept key tiles (block_mask_tiles.cuh)
// A tail tile (keys or queries past seq) is zero-filled by the TMA, so it adds 0 * 0 to S and
// 0 to P V; its keys are masked to -inf like any other hidden key, and O rows past seq are not
// written. With packed sequences the rows past a sequence's end are the next sequence's tokens
// (finite; zero-filled only past the last): masked and not written the same way.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/block_mask_tiles.cuh"
#include "kernels/attention_fwd/flash_mma.cuh"
#include "kernels/attention_fwd/flash_softmax.cuh"
#include "kernels/common/hopper/mbarrier.cuh"
#include "kernels/common/hopper/tma.cuh"
#include "kernels/common/hopper/wgmma.cuh"

namespace kwb {
namespace flash {

// Byte offsets in the (1024-byte aligned) dynamic shared memory of flash_fwd_v2<T, D, BN>.
template <int D, int BN>
struct V2Layout {
  static constexpr int kBM = 128;                      // query rows per block (2 consumers x 64)
  static constexpr int kSlabs = D / 64;                // 64-column (128-byte) slabs along d
  static constexpr int kQSlabBytes = kBM * 128;        // (128, 64) of Q
  static constexpr int kKVSlabBytes = BN * 128;        // (BN, 64) of K or V
  static constexpr int kQBytes = kSlabs * kQSlabBytes;
  static constexpr int kKVBytes = kSlabs * kKVSlabBytes;  // one K (or V) tile: what one stage's barrier expects
  // K/V tiles in flight: as many as fit in ~200 KB, up to 4 (d 128: 2 at k_tile 128, 4 at 64).
  // With tiles_in_flight 2 a K tile is needed one tile earlier, so depth beyond 2 hides the
  // copies' latency behind more than one tile of work.
  static constexpr int kStages = (200 * 1024 - kQBytes) / (2 * kKVBytes) < 4 ? (200 * 1024 - kQBytes) / (2 * kKVBytes) : 4;
  static_assert(kStages >= 2, "at least double buffering");
  static constexpr int kQ = 0;
  static constexpr int kK = kQ + kQBytes;
  static constexpr int kV = kK + kStages * kKVBytes;
  static constexpr int kBarriers = kV + kStages * kKVBytes;
  static constexpr int kBarrierCount = 1 + 4 * kStages;
  // + 1024: the dynamic base is only guaranteed 16-byte aligned; the kernel rounds it up.
  static constexpr int kSmemBytes = 1024 + kBarriers + kBarrierCount * 8;
  static constexpr int kThreads = 384;
  static constexpr int kConsumerWarps = 8;  // each consumer warp frees a stage by one arrival
};

template <class T, int D, int BN, bool kOverlap>
__global__ void __launch_bounds__(384, 1)
    flash_fwd_v2(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
                 const __grid_constant__ CUtensorMap v_map, T* __restrict__ o, float* __restrict__ lse,
                 AttentionParams p) {
  using L = V2Layout<D, BN>;
  static_assert(D == 64 || D == 128, "head_dim 64 or 128");
  static_assert(BN == 64 || BN == 128, "k_tile 64 or 128");
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = smem_raw + ((1024 - (hopper::smem_u32(smem_raw) & 1023)) & 1023);
  unsigned char* q_smem = smem + L::kQ;  // (D/64, 128, 64)
  unsigned char* k_smem = smem + L::kK;  // (2, D/64, BN, 64)
  unsigned char* v_smem = smem + L::kV;  // (2, D/64, BN, 64)
  std::uint64_t* bars = reinterpret_cast<std::uint64_t*>(smem + L::kBarriers);
  std::uint64_t* q_full = bars;
  std::uint64_t* k_full = bars + 1;
  std::uint64_t* v_full = bars + 1 + L::kStages;
  std::uint64_t* k_empty = bars + 1 + 2 * L::kStages;
  std::uint64_t* v_empty = bars + 1 + 3 * L::kStages;

  // The block's work, as in fused_v1: causal runs the longest rows (last tiles) first. Packed
  // sequences: this one's first token and its length (p.seq from here on); the grid covers the
  // longest, so a shorter (or empty) sequence's extra tiles leave at once, before any barrier.
  const std::int64_t head = blockIdx.y, batch = blockIdx.z;
  const std::int64_t start = p.enter_sequence(batch);
  const std::int64_t seq = p.seq, heads = p.heads;
  const std::int64_t q_tiles = (seq + L::kBM - 1) / L::kBM;
  if (static_cast<std::int64_t>(blockIdx.x) >= q_tiles) return;
  const std::int64_t q_tile_index = p.causal ? q_tiles - 1 - blockIdx.x : blockIdx.x;
  const std::int64_t q0 = q_tile_index * L::kBM;
  // TMA coordinates {d, head, row, batch}: dense, (q0 or k0, batch); packed, the maps span the
  // [total, heads, d] tokens as one batch, so rows are offset by the sequence's start. Rows past
  // the sequence's end are the next sequence's tokens (finite): keys there are masked like any key
  // past seq, and query rows there are computed but never stored.
  const int row0 = static_cast<int>(p.cu_seqlens ? start : 0);
  const int batch_coord = static_cast<int>(p.cu_seqlens ? 0 : batch);
  const std::int64_t kv = head / (heads / p.kv_heads);
  // Keys any row of the tile sees (first_key and end_key grow with the row).
  const std::int64_t last_row = (q0 + L::kBM < seq ? q0 + L::kBM : seq) - 1;
  const std::int64_t key_begin = p.first_key(q0), key_end = p.end_key(last_row);
  const std::int64_t tile_begin = key_begin / BN;
  int tiles = static_cast<int>((key_end + BN - 1) / BN - tile_begin);
  // Block-sparse: only the tiles of kept key blocks, listed after the barriers (every thread
  // takes part, before the roles part).
  const std::uint16_t* kept_tiles = nullptr;
  if (p.block_mask) {
    auto* list = reinterpret_cast<std::uint16_t*>(smem + L::kBarriers + L::kBarrierCount * 8);
    auto* flags = reinterpret_cast<std::uint8_t*>(list + tile_list_bytes<BN>(seq) / 3);
    tiles = list_kept_tiles<BN, L::kThreads>(p, batch, head, q0, tile_begin, tiles, list, flags);
    kept_tiles = list;
  }
  // The key tile of iteration `it`.
  auto tile_at = [&](int it) -> std::int64_t { return tile_begin + (kept_tiles ? kept_tiles[it] : it); };

  if (threadIdx.x == 0) {
    hopper::mbar_init(q_full, 1);
    for (int s = 0; s < L::kStages; ++s) {
      hopper::mbar_init(&k_full[s], 1);
      hopper::mbar_init(&v_full[s], 1);
      hopper::mbar_init(&k_empty[s], L::kConsumerWarps);
      hopper::mbar_init(&v_empty[s], L::kConsumerWarps);
    }
    hopper::fence_barrier_init();
  }
  __syncthreads();  // the last block-wide barrier: the roles part here

  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {
    // ---- Producer: one thread issues every copy; TMA coordinates are {d, head, row, batch}.
    hopper::set_register_budget_down<24>();
    if (threadIdx.x == 0) {
      hopper::prefetch_tensor_map(&q_map);
      hopper::prefetch_tensor_map(&k_map);
      hopper::prefetch_tensor_map(&v_map);
      hopper::mbar_arrive_expect_tx(q_full, L::kQBytes);
      for (int slab = 0; slab < L::kSlabs; ++slab)
        hopper::tma_load(q_smem + slab * L::kQSlabBytes, &q_map, q_full, slab * 64, static_cast<int>(head),
                         row0 + static_cast<int>(q0), batch_coord);
      hopper::RingPosition<L::kStages> pos;
      for (int it = 0; it < tiles; ++it) {
        // A fresh barrier counts as having completed the phase before phase 0: the first pass
        // over the ring does not wait.
        hopper::mbar_wait(&k_empty[pos.slot], pos.phase ^ 1);
        const int k0 = row0 + static_cast<int>(tile_at(it) * BN);
        unsigned char* k_tile = k_smem + pos.slot * L::kKVBytes;
        unsigned char* v_tile = v_smem + pos.slot * L::kKVBytes;
        hopper::mbar_arrive_expect_tx(&k_full[pos.slot], L::kKVBytes);
        for (int slab = 0; slab < L::kSlabs; ++slab)
          hopper::tma_load(k_tile + slab * L::kKVSlabBytes, &k_map, &k_full[pos.slot], slab * 64,
                           static_cast<int>(kv), k0, batch_coord);
        hopper::mbar_wait(&v_empty[pos.slot], pos.phase ^ 1);
        hopper::mbar_arrive_expect_tx(&v_full[pos.slot], L::kKVBytes);
        for (int slab = 0; slab < L::kSlabs; ++slab)
          hopper::tma_load(v_tile + slab * L::kKVSlabBytes, &v_map, &v_full[pos.slot], slab * 64,
                           static_cast<int>(kv), k0, batch_coord);
        pos.advance();
      }
    }
    return;  // every copy issued lands before a consumer passes its barrier, so the block outlives it
  }

  // ---- Consumers: warpgroup 1 owns query rows 0-63 of the tile, warpgroup 2 rows 64-127.
  hopper::set_register_budget_up<240>();
  const int consumer = warpgroup - 1;
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, c = lane % 4;
  const std::int64_t row_of[2] = {q0 + consumer * 64 + warp * 16 + g, q0 + consumer * 64 + warp * 16 + g + 8};
  const LogitMap logit = LogitMap::of(p);

  float o_acc[D / 2];  // (64, D) per warpgroup: the m64nD accumulator layout (wgmma.cuh)
#pragma unroll
  for (int i = 0; i < D / 2; ++i) o_acc[i] = 0;
  OnlineSoftmax softmax;

  // The steps of one key tile, in the order the simple loop runs them.
  // S (64, BN) = Q K^T, both K-major: per k step of 16 (32 bytes) along d, the next 32 bytes of
  // a 128-byte row, and the next slab every 4 steps. Issued and committed as one group.
  auto issue_s = [&](float(&s)[BN / 2], const unsigned char* k_tile) {
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const int slab = kk / 4, step_bytes = (kk % 4) * 32;
      const std::uint64_t a = hopper::smem_descriptor(q_smem + slab * L::kQSlabBytes + consumer * 64 * 128 + step_bytes);
      const std::uint64_t b = hopper::smem_descriptor(k_tile + slab * L::kKVSlabBytes + step_bytes);
      hopper::Wgmma<BN, T>::ss(s, a, b, kk > 0 ? 1 : 0);
    }
    hopper::wgmma_commit();
  };
  // Masked logits (only on tiles that straddle an edge of the block's rows), online softmax:
  // s becomes P (fp32); rescale = what O's rows must be multiplied by.
  auto softmax_tile = [&](float(&s)[BN / 2], int tile, float(&rescale)[2]) {
    const std::int64_t k0 = tile_at(tile) * BN;
    const bool needs_mask = tile_needs_mask(p, q0, q0 + L::kBM - 1, k0, BN);
    softmax.step<BN>([&](int j, int e) -> float& { return s[4 * j + e]; }, logit, p, needs_mask, row_of, k0, c,
                     rescale);
  };
  auto rescale_o = [&](const float(&rescale)[2]) {
#pragma unroll
    for (int j = 0; j < D / 8; ++j) {
      o_acc[4 * j + 0] *= rescale[0];
      o_acc[4 * j + 1] *= rescale[0];
      o_acc[4 * j + 2] *= rescale[1];
      o_acc[4 * j + 3] *= rescale[1];
    }
  };
  // P's A fragment for keys 16 kk .. 16 kk + 15 is S's accumulators 8 kk .. 8 kk + 7 (the
  // m16n8k16 A layout per warp), rounded to T. All of P is packed before the wgmmas are issued:
  // a register written between two of them would make the compiler fence (serialise) each one.
  auto pack_p = [&](const float(&s)[BN / 2], std::uint32_t(&frag)[BN / 16][4]) {
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk)
#pragma unroll
      for (int i = 0; i < 4; ++i) frag[kk][i] = pack2<T>(s[8 * kk + 2 * i], s[8 * kk + 2 * i + 1]);
  };
  // O (64, D) += P (64, BN) V (BN, D). V is MN-major (d contiguous): leading offset = the
  // distance between 64-column slabs, stride offset = 8 key rows (1024 bytes); each k step of 16
  // keys starts 16 rows (2048 bytes) further. Issued and committed as one group.
  auto issue_pv = [&](std::uint32_t(&frag)[BN / 16][4], const unsigned char* v_tile) {
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
      const std::uint64_t b = hopper::smem_descriptor(v_tile + kk * 16 * 128, L::kKVSlabBytes, hopper::kAtomBytes);
      hopper::Wgmma<D, T>::template rs<1>(o_acc, frag[kk], b, 1);
    }
    hopper::wgmma_commit();
  };
  auto fence_p = [&](std::uint32_t(&frag)[BN / 16][4]) {
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) hopper::fence_fragment(frag[kk]);
  };
  // A stage is freed by one arrival per consumer warp, once the wgmmas that read it completed.
  auto release = [&](std::uint64_t* bar) {
    if (lane == 0) hopper::mbar_arrive(bar);
  };
  // Ping-pong: a consumer issues its GEMMs only on its turn, then hands the turn to the other.
  auto my_turn = [&] { hopper::named_barrier_sync(1 + consumer, 256); };
  auto their_turn = [&] { hopper::named_barrier_arrive(2 - consumer, 256); };
  auto k_tile_of = [&](int slot) { return k_smem + slot * L::kKVBytes; };
  auto v_tile_of = [&](int slot) { return v_smem + slot * L::kKVBytes; };

  hopper::mbar_wait(q_full, 0);
  hopper::RingPosition<L::kStages> pos;
  float s_acc[BN / 2];                 // (64, BN) S, then P in fp32
  std::uint32_t p_frag[BN / 16][4];    // P in T: the A operand of P V
  if constexpr (!kOverlap) {
    // Simple order: S, wait, softmax, P V, wait. The other consumer warpgroup's wgmmas fill the
    // tensor cores while this one runs its softmax.
    for (int it = 0; it < tiles; ++it) {
      float rescale[2];
      hopper::mbar_wait(&k_full[pos.slot], pos.phase);
      hopper::wgmma_fence();
      issue_s(s_acc, k_tile_of(pos.slot));
      hopper::wgmma_wait<0>();
      hopper::fence_accumulators(s_acc);
      release(&k_empty[pos.slot]);
      softmax_tile(s_acc, it, rescale);
      rescale_o(rescale);
      pack_p(s_acc, p_frag);
      hopper::mbar_wait(&v_full[pos.slot], pos.phase);
      hopper::wgmma_fence();
      issue_pv(p_frag, v_tile_of(pos.slot));
      hopper::wgmma_wait<0>();
      hopper::fence_accumulators(o_acc);
      fence_p(p_frag);
      release(&v_empty[pos.slot]);
      pos.advance();
    }
  } else {
    // FlashAttention-3's intra-warpgroup overlap: tile it + 1's S = Q K^T is issued before tile
    // it's P V, and its softmax runs while that P V is on the tensor cores. O is rescaled (and
    // the next P packed) only after P V completes, as the softmax of tile it + 1 asks.
    // Turns: consumer 0 first; each consumer takes tiles + 1 turns and hands over as many, but
    // consumer 1's last hand-over is skipped (consumer 0 has no turn left to take it), so both
    // named barriers end balanced.
    if (tiles > 0) {
      if (consumer == 1) their_turn();
      {
        float rescale[2];  // O is still 0: nothing to rescale
        my_turn();
        hopper::mbar_wait(&k_full[pos.slot], pos.phase);
        hopper::wgmma_fence();
        issue_s(s_acc, k_tile_of(pos.slot));
        their_turn();
        hopper::wgmma_wait<0>();
        hopper::fence_accumulators(s_acc);
        release(&k_empty[pos.slot]);
        softmax_tile(s_acc, 0, rescale);
        pack_p(s_acc, p_frag);
      }
      // Every tile but the last: branch-free, so that the compiler sees which wait retires which
      // wgmma (a conditional S would make it serialise every wgmma).
      for (int it = 0; it + 1 < tiles; ++it) {
        hopper::RingPosition<L::kStages> next = pos;
        next.advance();
        float rescale[2];
        my_turn();
        hopper::mbar_wait(&k_full[next.slot], next.phase);
        hopper::wgmma_fence();
        issue_s(s_acc, k_tile_of(next.slot));
        hopper::mbar_wait(&v_full[pos.slot], pos.phase);
        hopper::wgmma_fence();
        issue_pv(p_frag, v_tile_of(pos.slot));
        their_turn();
        hopper::wgmma_wait<1>();  // the older group, S of tile it + 1, is complete
        hopper::fence_accumulators(s_acc);
        release(&k_empty[next.slot]);
        softmax_tile(s_acc, it + 1, rescale);
        hopper::wgmma_wait<0>();
        hopper::fence_accumulators(o_acc);
        fence_p(p_frag);
        release(&v_empty[pos.slot]);
        rescale_o(rescale);
        pack_p(s_acc, p_frag);
        pos = next;
      }
      // The last tile: its P V alone.
      {
        my_turn();
        hopper::mbar_wait(&v_full[pos.slot], pos.phase);
        hopper::wgmma_fence();
        issue_pv(p_frag, v_tile_of(pos.slot));
        if (consumer == 0) their_turn();
        hopper::wgmma_wait<0>();
        hopper::fence_accumulators(o_acc);
        fence_p(p_frag);
        release(&v_empty[pos.slot]);
      }
    }
  }

  // Epilogue: O / l in T, lse in fp32 (flash_softmax.cuh).
  store_output<T, D>(softmax, [&](int j, int e) { return o_acc[4 * j + e]; }, p, batch, head, start, row_of, c, o,
                     lse);
}

}  // namespace flash
}  // namespace kwb
