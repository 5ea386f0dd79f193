// The Hopper backward kernel of attention_bwd's fused_v2 (see fused_v2_wgmma_tma_sm90a.cu for the
// why and the napkin math), sm_90a only: fused_v1's mapping (flash_bwd_v1.cuh: the keys are the
// M dimension, S^T = K Q^T, so that P^T and dS^T are dV's and dK's A operands straight from the
// accumulators) on wgmma, with the operands brought by the TMA. One block per (key tile of 128,
// kv head, batch), three warpgroups of 128 threads:
//   - warpgroup 0, the producer (setmaxnreg down to 24): thread 0 copies K and V once, then per
//     step (query head of the group, query tile of 64) Q and dO into a 2-stage ring; warp 1 copies
//     the step's lse (in log2 units) and D rows beside them (rows past seq: lse +inf, so P = 0).
//   - warpgroups 1 and 2, the consumers (setmaxnreg up to 240): consumer w owns keys 64 w .. 64 w
//     + 63 of the tile and keeps dK and dV (64 x D, fp32) for them over the whole loop. Per step:
//       S^T, dP^T (64 keys x 64 queries) = K_w Q^T, V_w dO^T      ss: K, V rows; Q, dO [query][d]
//       P^T = 2^(x - lse), dS^T = P^T (dP^T - D) l'(s)           in registers (masked per element
//                                                                 only on tiles at an edge)
//       dV += P^T dO, dK += dS^T Q                                rs: P^T, dS^T from registers;
//                                                                 dO, Q as MN-major B
//       dS (64 queries x its 64 keys) to shared memory            the K-major 128-byte-swizzled
//                                                                 slab a TMA copy would write
//       dQ (64 queries x 64) = dS K, added into the fp32          ss: dS K-major, K MN-major
//       accumulator by float2 atomics
//     At d = 128 consumer w computes d-columns 64 w .. 64 w + 63 of dQ over all 128 keys (both
//     consumers' dS slabs: a named barrier between writing dS and reading it; dS is double
//     buffered, so that one barrier a step also covers the reuse). At d = 64 each computes all
//     64 columns over its own 64 keys (a barrier of its own four warps; two adds per dQ element
//     instead of one).
//   The two consumers run unsynchronised otherwise: one's elementwise work fills the tensor
//   cores' gaps with the other's GEMMs.
//
// Shared memory, every tile a stack of 64-column slabs of 128-byte rows in the 128-byte swizzle:
//   K (D/64, 128, 64)  V (D/64, 128, 64)  Q ring (2, D/64, 64, 64)  dO ring (2, D/64, 64, 64)
//   dS (2 buffers, 2 key slabs, 64, 64)  lse, D (2 stages, 64 fp32 each)  barriers
// 162 KiB at d = 128, 98 KiB at d = 64 (the alignment slack included): one block per SM.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <type_traits>

#include "kernels/attention_bwd/flash_bwd_v1.cuh"  // PairMask, atomic_add2
#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/flash_mma.cuh"
#include "kernels/attention_fwd/flash_softmax.cuh"  // fast_exp2, kLog2e, tile_needs_mask
#include "kernels/common/hopper/mbarrier.cuh"
#include "kernels/common/hopper/tma.cuh"
#include "kernels/common/hopper/wgmma.cuh"

namespace kwb {
namespace flash {

// Byte offsets in the (1024-byte aligned) dynamic shared memory of flash_bwd_v2<T, D>.
template <int D>
struct BwdV2Layout {
  static constexpr int kBN = 128;  // keys per block (2 consumers x 64)
  static constexpr int kBM = 64;   // queries per step
  static constexpr int kStages = 2;
  static constexpr int kSlabs = D / 64;
  static constexpr int kKVSlabBytes = kBN * 128;  // (128 keys, 64 d)
  static constexpr int kKVBytes = kSlabs * kKVSlabBytes;
  static constexpr int kQSlabBytes = kBM * 128;  // (64 queries, 64 d)
  static constexpr int kQBytes = kSlabs * kQSlabBytes;
  static constexpr int kDsSlabBytes = kBM * 128;  // (64 queries, one consumer's 64 keys)
  static constexpr int kDsBytes = 2 * kDsSlabBytes;
  static constexpr int kK = 0;
  static constexpr int kV = kK + kKVBytes;
  static constexpr int kQ = kV + kKVBytes;
  static constexpr int kDo = kQ + kStages * kQBytes;
  static constexpr int kDs = kDo + kStages * kQBytes;
  static constexpr int kRows = kDs + 2 * kDsBytes;            // lse then D, kBM floats each per stage
  static constexpr int kBarriers = kRows + kStages * 2 * kBM * 4;
  static constexpr int kBarrierCount = 1 + 2 * kStages;       // kv_full, then full, empty per stage
  // + 1024: the dynamic base is only guaranteed 16-byte aligned; the kernel rounds it up.
  static constexpr int kSmemBytes = 1024 + kBarriers + kBarrierCount * 8;
  static constexpr int kThreads = 384;
  static constexpr int kConsumerThreads = 256;  // each consumer thread frees a stage by one arrival
};

// kPacked (attention_varlen_bwd): the block's sequence b = blockIdx.z holds tokens [start, start +
// L) of the packed [total, h, d] tensors (p.enter_sequence: p.seq becomes L); the tensor maps span the
// tokens as one batch, so TMA rows are offset by the start, and rows past L are the next sequence's
// tokens (finite): keys there are masked like any key past seq, queries there get lse +inf (P = 0)
// and no dQ. lse and D are [h, total]. The grid covers the longest sequence: a block whose key tile
// starts past L leaves before any barrier. A template parameter, so the dense kernel's code stays
// as it is.
template <class T, int D, bool kPacked>
__global__ void __launch_bounds__(384, 1)
    flash_bwd_v2(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
                 const __grid_constant__ CUtensorMap v_map, const __grid_constant__ CUtensorMap do_map,
                 const float* __restrict__ lse, const float* __restrict__ d_sum, float* __restrict__ dq_accum,
                 T* __restrict__ dk, T* __restrict__ dv, AttentionParams p) {
  using L = BwdV2Layout<D>;
  static_assert(D == 64 || D == 128, "head_dim 64 or 128");
  // d = 128: each consumer computes half of dQ's columns over both key slabs; d = 64: all of them
  // over its own slab.
  constexpr bool kSplitDq = D == 128;
  constexpr int kDqSteps = kSplitDq ? L::kBN / 16 : 64 / 16;  // k steps (16 keys) of dQ = dS K
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = smem_raw + ((1024 - (hopper::smem_u32(smem_raw) & 1023)) & 1023);
  unsigned char* k_smem = smem + L::kK;
  unsigned char* v_smem = smem + L::kV;
  unsigned char* q_smem = smem + L::kQ;
  unsigned char* do_smem = smem + L::kDo;
  unsigned char* ds_smem = smem + L::kDs;
  float* rows_smem = reinterpret_cast<float*>(smem + L::kRows);  // (stage, lse | D, kBM)
  std::uint64_t* bars = reinterpret_cast<std::uint64_t*>(smem + L::kBarriers);
  std::uint64_t* kv_full = bars;
  std::uint64_t* full = bars + 1;
  std::uint64_t* empty = bars + 1 + L::kStages;

  // The sequence's first token among the tokens (dense: batch * seq) and, packed, its length.
  const int kv = static_cast<int>(blockIdx.y), batch = static_cast<int>(blockIdx.z);
  std::int64_t first_token = static_cast<std::int64_t>(batch) * p.seq;
  if constexpr (kPacked) {
    first_token = p.enter_sequence(batch);
    if (static_cast<std::int64_t>(blockIdx.x) * L::kBN >= p.seq) return;
  }
  // TMA coordinates {d, head, row, batch}: dense (row, batch); packed, rows offset by the start in
  // the one batch.
  const int row0 = kPacked ? static_cast<int>(first_token) : 0, batch_coord = kPacked ? 0 : batch;
  // Positions within a sequence in 32 bits (refuse() keeps seq below 2^30).
  const int seq = static_cast<int>(p.seq), group = static_cast<int>(p.heads / p.kv_heads);
  const int n0 = static_cast<int>(blockIdx.x) * L::kBN;
  // Query tiles that see any key of the block (one interval: flash_bwd_v1.cuh).
  const int last_key = (n0 + L::kBN < seq ? n0 + L::kBN : seq) - 1;
  const int tile_begin = static_cast<int>(p.first_query(n0) / L::kBM);
  const int q_tiles = static_cast<int>((p.end_query(last_key) + L::kBM - 1) / L::kBM) - tile_begin;
  const int steps = group * q_tiles;  // (head of the group, query tile), tile fastest

  if (threadIdx.x == 0) {
    hopper::mbar_init(kv_full, 1);
    for (int s = 0; s < L::kStages; ++s) {
      // The copies' thread (with their bytes) and each lane of the rows' warp; every consumer thread.
      hopper::mbar_init(&full[s], 1 + 32);
      hopper::mbar_init(&empty[s], L::kConsumerThreads);
    }
    hopper::fence_barrier_init();
  }
  __syncthreads();  // the last block-wide barrier: the roles part here

  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {
    hopper::set_register_budget_down<24>();
    const int warp = threadIdx.x / 32;
    if (threadIdx.x == 0) {
      // ---- The copies; TMA coordinates are {d, head, row, batch}.
      hopper::prefetch_tensor_map(&q_map);
      hopper::prefetch_tensor_map(&k_map);
      hopper::prefetch_tensor_map(&v_map);
      hopper::prefetch_tensor_map(&do_map);
      hopper::mbar_arrive_expect_tx(kv_full, 2 * L::kKVBytes);
      for (int slab = 0; slab < L::kSlabs; ++slab) {
        hopper::tma_load(k_smem + slab * L::kKVSlabBytes, &k_map, kv_full, slab * 64, kv, row0 + n0, batch_coord);
        hopper::tma_load(v_smem + slab * L::kKVSlabBytes, &v_map, kv_full, slab * 64, kv, row0 + n0, batch_coord);
      }
      hopper::RingPosition<L::kStages> pos;
      int head = kv * group, m0 = tile_begin * L::kBM;
      const int m_end = (tile_begin + q_tiles) * L::kBM;
      for (int step = 0; step < steps; ++step) {
        hopper::mbar_wait(&empty[pos.slot], pos.phase ^ 1);
        hopper::mbar_arrive_expect_tx(&full[pos.slot], 2 * L::kQBytes);
        for (int slab = 0; slab < L::kSlabs; ++slab) {
          hopper::tma_load(q_smem + pos.slot * L::kQBytes + slab * L::kQSlabBytes, &q_map, &full[pos.slot],
                           slab * 64, head, row0 + m0, batch_coord);
          hopper::tma_load(do_smem + pos.slot * L::kQBytes + slab * L::kQSlabBytes, &do_map, &full[pos.slot],
                           slab * 64, head, row0 + m0, batch_coord);
        }
        pos.advance();
        m0 += L::kBM;
        if (m0 == m_end) m0 = tile_begin * L::kBM, ++head;  // the group's next head
      }
    } else if (warp == 1) {
      // ---- The rows: lse (log2 units) and D of the step's queries, two each per lane (pointers
      // advanced per head, not recomputed: this warp has 24 registers).
      const int lane = threadIdx.x % 32;
      const std::int64_t first_row = p.lse_index(batch, kv * group, first_token, 0);
      const std::int64_t head_stride = kPacked ? p.total : p.seq;  // lse's (and D's) rows of one head
      const float* lse_head = lse + first_row;
      const float* dsum_head = d_sum + first_row;
      int m0 = tile_begin * L::kBM;
      const int m_end = (tile_begin + q_tiles) * L::kBM;
      hopper::RingPosition<L::kStages> pos;
      for (int step = 0; step < steps; ++step) {
        hopper::mbar_wait(&empty[pos.slot], pos.phase ^ 1);
        float* lse_rows = rows_smem + pos.slot * 2 * L::kBM;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int i = lane + 32 * half, query = m0 + i;
          const bool valid = query < seq;
          lse_rows[i] = valid ? lse_head[query] * kLog2e : INFINITY;
          lse_rows[L::kBM + i] = valid ? dsum_head[query] : 0.0f;
        }
        hopper::mbar_arrive(&full[pos.slot]);  // release: this lane's rows before its arrival
        pos.advance();
        m0 += L::kBM;
        if (m0 == m_end) {  // the group's next head
          m0 = tile_begin * L::kBM;
          lse_head += head_stride;
          dsum_head += head_stride;
        }
      }
    }
    return;  // every copy issued lands before a consumer passes its barrier, so the block outlives it
  }

  // ---- Consumers: consumer w owns keys n0 + 64 w .. n0 + 64 w + 63.
  hopper::set_register_budget_up<240>();
  const int consumer = warpgroup - 1;
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, c = lane % 4;
  const int key_of[2] = {n0 + consumer * 64 + warp * 16 + g, n0 + consumer * 64 + warp * 16 + g + 8};
  const LogitMap logit = LogitMap::of(p);
  const PairMask visible = PairMask::of(p);
  const std::int64_t q_stride = p.heads * D;

  float dk_acc[D / 2], dv_acc[D / 2];  // (64 keys, D): the m64nD accumulator layout (wgmma.cuh)
#pragma unroll
  for (int i = 0; i < D / 2; ++i) dk_acc[i] = dv_acc[i] = 0;

  hopper::mbar_wait(kv_full, 0);
  hopper::RingPosition<L::kStages> pos;
  for (int step = 0; step < steps; ++step) {
    const int hg = step / q_tiles, m0 = (tile_begin + step % q_tiles) * L::kBM;
    const unsigned char* q_tile = q_smem + pos.slot * L::kQBytes;
    const unsigned char* do_tile = do_smem + pos.slot * L::kQBytes;
    const float* lse_rows = rows_smem + pos.slot * 2 * L::kBM;
    const float* dsum_rows = lse_rows + L::kBM;

    // S^T and dP^T (64 keys, 64 queries): A = this consumer's K (V) rows, B = Q (dO) [query][d],
    // both K-major; per k step of 16 along d the next 32 bytes of a 128-byte row, the next slab
    // every 4 steps. One group.
    float s_acc[32], dp_acc[32];
    hopper::mbar_wait(&full[pos.slot], pos.phase);
    hopper::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const int slab = kk / 4, step_bytes = (kk % 4) * 32;
      const int kv_offset = slab * L::kKVSlabBytes + consumer * 64 * 128 + step_bytes;
      const int q_offset = slab * L::kQSlabBytes + step_bytes;
      hopper::Wgmma<64, T>::ss(s_acc, hopper::smem_descriptor(k_smem + kv_offset),
                               hopper::smem_descriptor(q_tile + q_offset), kk > 0 ? 1 : 0);
      hopper::Wgmma<64, T>::ss(dp_acc, hopper::smem_descriptor(v_smem + kv_offset),
                               hopper::smem_descriptor(do_tile + q_offset), kk > 0 ? 1 : 0);
    }
    hopper::wgmma_commit();
    hopper::wgmma_wait<0>();
    hopper::fence_accumulators(s_acc);
    hopper::fence_accumulators(dp_acc);

    // P^T into s_acc, dS^T into dp_acc. Element (j, e): key key_of[e >> 1], query m0 + 8 j + 2 c +
    // (e & 1). The soft-cap and the mask are decided once per step, with the elements' loop
    // compiled for each (flash_softmax.cuh says why).
    const bool needs_mask =
        m0 + L::kBM > seq || tile_needs_mask(p, m0, m0 + L::kBM - 1, n0 + consumer * 64, 64);
    auto probs_and_ds = [&](auto capped_c, auto masked_c) {
      constexpr bool kCapped = decltype(capped_c)::value, kMasked = decltype(masked_c)::value;
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int col = j * 8 + 2 * c;
        const float2 lse2 = *reinterpret_cast<const float2*>(lse_rows + col);
        const float2 dsum2 = *reinterpret_cast<const float2*>(dsum_rows + col);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float s = s_acc[4 * j + e];
          const float lse_log2 = (e & 1) ? lse2.y : lse2.x;
          float dlogit;  // dl / ds
          float prob = logit.backward_prob<kCapped>(s, lse_log2, dlogit);
          if constexpr (kMasked) {
            if (!visible(m0 + col + (e & 1), key_of[e >> 1])) prob = 0;
          }
          s_acc[4 * j + e] = prob;
          const float ds = prob * (dp_acc[4 * j + e] - ((e & 1) ? dsum2.y : dsum2.x));
          dp_acc[4 * j + e] = kCapped ? ds * dlogit : ds;
        }
      }
    };
    with_cap_and_mask(logit.capped, needs_mask, probs_and_ds);

    // P^T's and dS^T's A fragments for queries 16 kk .. 16 kk + 15: accumulators 8 kk .. 8 kk + 7
    // (the forward's P), rounded to T, all packed before the wgmmas are issued.
    std::uint32_t p_frag[4][4], ds_frag[4][4];
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        p_frag[kk][i] = pack2<T>(s_acc[8 * kk + 2 * i], s_acc[8 * kk + 2 * i + 1]);
        ds_frag[kk][i] = pack2<T>(dp_acc[8 * kk + 2 * i], dp_acc[8 * kk + 2 * i + 1]);
      }

    // dV += P^T dO, dK += dS^T Q: B = dO (Q) [query][d], MN-major (d contiguous): leading offset
    // the distance between 64-column slabs, each k step of 16 queries 16 rows (2048 bytes) on.
    hopper::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
      hopper::Wgmma<D, T>::template rs<1>(
          dv_acc, p_frag[kk], hopper::smem_descriptor(do_tile + kk * 16 * 128, L::kQSlabBytes, hopper::kAtomBytes),
          1);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
      hopper::Wgmma<D, T>::template rs<1>(
          dk_acc, ds_frag[kk], hopper::smem_descriptor(q_tile + kk * 16 * 128, L::kQSlabBytes, hopper::kAtomBytes),
          1);
    hopper::wgmma_commit();

    // dS (queries as rows, this consumer's 64 keys as a 128-byte K row) into its slab of this
    // step's buffer, in the 128-byte swizzle: element (query i, key k) at byte i 128 + ((k / 8) ^
    // (i % 8)) 16 + (k % 8) 2.
    unsigned char* ds_buffer = ds_smem + (step & 1) * L::kDsBytes;
    unsigned char* ds_slab = ds_buffer + consumer * L::kDsSlabBytes;
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = j * 8 + 2 * c + (e & 1), k = warp * 16 + g + 8 * (e >> 1);
        const float value = dp_acc[4 * j + e];
        T rounded;
        if constexpr (std::is_same_v<T, __nv_bfloat16>) rounded = __float2bfloat16_rn(value);
        else rounded = __float2half_rn(value);
        *reinterpret_cast<T*>(ds_slab + i * 128 + (((k >> 3) ^ (i & 7)) << 4) + (k & 7) * 2) = rounded;
      }
    hopper::fence_async_shared();  // the stores, before the wgmmas' (async proxy) reads
    // dQ's wgmma reads every row of the tile it takes, rows that the other warps wrote (warp w wrote
    // keys 16 w .. 16 w + 15 of every query): the writers must meet first, both consumers at d =
    // 128 (both key slabs), this consumer's four warps at d = 64.
    if constexpr (kSplitDq) hopper::named_barrier_sync(1, 256);
    else hopper::named_barrier_sync(2 + consumer, 128);

    // dQ (64 queries, 64 d-columns) = dS K: A = dS K-major (k steps of 16 keys: 32 bytes along a
    // slab's rows, the next slab every 4); B = K [key][d] MN-major, the d slab of these columns.
    float dq_acc[32];
    const int dq_slab = kSplitDq ? consumer : 0;
    const unsigned char* dq_a = kSplitDq ? ds_buffer : ds_slab;
    const unsigned char* dq_b = k_smem + dq_slab * L::kKVSlabBytes + (kSplitDq ? 0 : consumer * 64 * 128);
    hopper::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kDqSteps; ++kk)
      hopper::Wgmma<64, T>::template ss<1>(
          dq_acc, hopper::smem_descriptor(dq_a + (kk / 4) * L::kDsSlabBytes + (kk % 4) * 32),
          hopper::smem_descriptor(dq_b + kk * 16 * 128, L::kKVSlabBytes, hopper::kAtomBytes), kk > 0 ? 1 : 0);
    hopper::wgmma_commit();
    hopper::wgmma_wait<0>();
    hopper::fence_accumulators(dq_acc);
    hopper::fence_accumulators(dk_acc);
    hopper::fence_accumulators(dv_acc);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      hopper::fence_fragment(p_frag[kk]);
      hopper::fence_fragment(ds_frag[kk]);
    }
    // Q, dO, lse and D of this stage are read: every consumer thread arrives (each read lse and D
    // itself, so each releases its own reads to the rows warp's next writes).
    hopper::mbar_arrive(&empty[pos.slot]);

    // dQ's adds: rows m0 + 16 warp + g (+ 8), columns 64 dq_slab + 8 j + 2 c (+ 1); rows past seq
    // skipped. The accumulator is [b, s, h, d] ([total, h, d] packed) fp32, scaled in the last pass.
    const int head = kv * group + hg;
    float* dq_head = dq_accum + (first_token * p.heads + head) * D + dq_slab * 64;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int query = m0 + warp * 16 + g + 8 * r;
      if (query >= seq) continue;
      float* out = dq_head + query * q_stride;
#pragma unroll
      for (int j = 0; j < 8; ++j) atomic_add2(out + j * 8 + 2 * c, dq_acc[4 * j + 2 * r], dq_acc[4 * j + 2 * r + 1]);
    }
    pos.advance();
  }

  // dK (scaled in fp32) and dV in T, the thread's two keys; rows past seq skipped.
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    if (key_of[r] >= seq) continue;
    const std::int64_t row = ((first_token + key_of[r]) * p.kv_heads + kv) * D;
    T* dk_row = dk + row;
    T* dv_row = dv + row;
#pragma unroll
    for (int j = 0; j < D / 8; ++j) {
      *reinterpret_cast<std::uint32_t*>(dk_row + j * 8 + 2 * c) =
          pack2<T>(dk_acc[4 * j + 2 * r] * p.scale, dk_acc[4 * j + 2 * r + 1] * p.scale);
      *reinterpret_cast<std::uint32_t*>(dv_row + j * 8 + 2 * c) = pack2<T>(dv_acc[4 * j + 2 * r], dv_acc[4 * j + 2 * r + 1]);
    }
  }
}

}  // namespace flash
}  // namespace kwb
