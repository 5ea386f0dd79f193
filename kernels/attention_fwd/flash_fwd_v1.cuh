// The FlashAttention-2 forward kernel of fused_v1 (see fused_v1_fa2_mma_cp_async.cu for the why
// and the napkin math): one block per (query tile of BM rows, head, batch), BM / 16 warps each
// owning 16 query rows, K and V tiles of BN keys streamed through a `stages`-deep cp.async ring.
//
// Per key tile, each warp: S (16 x BN) = Q K^T with Q's fragments held in registers for the whole
// loop; logits in log2 units, x = l * log2(e) (scale and log2(e) folded into one multiply, or the
// soft-cap's cap * log2(e) * tanh(s * scale / cap)); -inf where the mask hides a key, decided per
// element only on tiles that straddle the causal diagonal, the window's edge or the sequence's
// end; the online softmax (running max m and sum l per row, O rescaled by 2^(m_old - m_new));
// P rounded to T straight from the S accumulators into A fragments (the C and A layouts line up
// pairwise); O (16 x D) += P V with V's B fragments by ldmatrix.trans. At the end O / l is
// written in T and lse = (m + log2 l) ln 2 in fp32. The softmax part (logit map, mask test,
// online max / sum, lse) lives in flash_softmax.cuh, shared with fused_v2.
#pragma once

#include <cstdint>

#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/block_mask_tiles.cuh"
#include "kernels/attention_fwd/flash_mma.cuh"
#include "kernels/attention_fwd/flash_softmax.cuh"

namespace kwb {
namespace flash {

constexpr int kMaxStages = 3;

template <int D, int BM, int BN>
constexpr int smem_bytes(int stages, int elem_bytes = 2) {
  return (BM * D + 2 * stages * BN * D) * elem_bytes;  // Q (BM, D) + stages x [K (BN, D), V (BN, D)]
}

// Copies rows [r0, r0 + R) of a matrix whose rows are `row_stride` elements apart (D contiguous
// values each) into a swizzled [R][D] tile; rows at or past `rows` are zero-filled, so that a
// tail tile's padding contributes 0 * 0 to S and 0 to P V (never NaN from stale memory).
template <class T, int D, int R, int kThreads>
__device__ __forceinline__ void load_tile(T* tile, const T* base, std::int64_t r0, std::int64_t rows,
                                          std::int64_t row_stride) {
  constexpr int kChunksPerRow = D / 8;  // 16-byte chunks
  static_assert(R * kChunksPerRow % kThreads == 0, "every thread copies the same number of chunks");
#pragma unroll
  for (int i = 0; i < R * kChunksPerRow / kThreads; ++i) {
    const int c = i * kThreads + static_cast<int>(threadIdx.x);
    const int row = c / kChunksPerRow, col = (c % kChunksPerRow) * 8;
    const bool valid = r0 + row < rows;
    const T* src = valid ? base + (r0 + row) * row_stride + col : base;
    cp_async_16(smem_address(tile + swizzle<D>(row, col)), src, valid);
  }
}

template <class T, int D, int BM, int BN>
__global__ void __launch_bounds__(BM / 16 * 32)
    flash_fwd_v1(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, T* __restrict__ o,
                 float* __restrict__ lse, AttentionParams p, int stages) {
  constexpr int kThreads = BM / 16 * 32;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* q_tile = reinterpret_cast<T*>(smem_raw);  // (BM, D)
  T* k_ring = q_tile + BM * D;                 // (stages, BN, D)
  T* v_ring = k_ring + stages * BN * D;        // (stages, BN, D)

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, c = lane % 4;
  const std::int64_t head = blockIdx.y, batch = blockIdx.z;
  // Packed sequences: this one's first token and its length (p.seq from here on); the grid covers
  // the longest, so a shorter (or empty) sequence's extra tiles leave at once.
  const std::int64_t start = p.enter_sequence(batch);
  const std::int64_t seq = p.seq, heads = p.heads, kv_heads = p.kv_heads;
  const std::int64_t q_tiles = (seq + BM - 1) / BM;
  if (static_cast<std::int64_t>(blockIdx.x) >= q_tiles) return;
  // Causal: the longest rows (last tiles) first, so that short tiles fill the tail of the grid.
  const std::int64_t q_tile_index = p.causal ? q_tiles - 1 - blockIdx.x : blockIdx.x;
  const std::int64_t q0 = q_tile_index * BM;
  const std::int64_t kv = head / (heads / kv_heads);
  const std::int64_t q_stride = heads * D, kv_stride = kv_heads * D;
  const T* q_base = q + (start * heads + head) * D;
  const T* k_base = k + (start * kv_heads + kv) * D;
  const T* v_base = v + (start * kv_heads + kv) * D;

  // Keys any row of the tile sees (first_key and end_key grow with the row).
  const std::int64_t last_row = (q0 + BM < seq ? q0 + BM : seq) - 1;
  const std::int64_t key_begin = p.first_key(q0), key_end = p.end_key(last_row);
  const std::int64_t tile_begin = key_begin / BN;
  int tiles = static_cast<int>((key_end + BN - 1) / BN - tile_begin);
  // Block-sparse: only the tiles of kept key blocks, listed after the ring.
  const std::uint16_t* kept_tiles = nullptr;
  if (p.block_mask) {
    auto* list = reinterpret_cast<std::uint16_t*>(v_ring + stages * BN * D);
    auto* flags = reinterpret_cast<std::uint8_t*>(list + tile_list_bytes<BN>(seq) / 3);
    tiles = list_kept_tiles<BN, kThreads>(p, batch, head, q0, tile_begin, tiles, list, flags);
    kept_tiles = list;
  }
  // The key tile of iteration `it`.
  auto tile_at = [&](int it) -> std::int64_t { return tile_begin + (kept_tiles ? kept_tiles[it] : it); };

  // Prologue: Q and the first `stages - 1` key tiles, one commit group each (Q rides with tile 0).
  load_tile<T, D, BM, kThreads>(q_tile, q_base, q0, seq, q_stride);
  for (int s = 0; s < stages - 1; ++s) {
    if (s < tiles) {
      const std::int64_t k0 = tile_at(s) * BN;
      load_tile<T, D, BN, kThreads>(k_ring + s * BN * D, k_base, k0, seq, kv_stride);
      load_tile<T, D, BN, kThreads>(v_ring + s * BN * D, v_base, k0, seq, kv_stride);
    }
    cp_async_commit();
  }

  const LogitMap logit = LogitMap::of(p);
  const std::int64_t row_of[2] = {q0 + warp * 16 + g, q0 + warp * 16 + g + 8};

  std::uint32_t q_frag[D / 16][4];  // this warp's 16 rows of Q, all of D
  float o_acc[D / 8][4];             // (16, D) in C fragments
  OnlineSoftmax softmax;             // running max and sum of rows row_of[0], row_of[1]
#pragma unroll
  for (int j = 0; j < D / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) o_acc[j][e] = 0;

  for (int it = 0; it < tiles; ++it) {
    // Refill the stage consumed in the previous iteration (the closing barrier made it free).
    const int ahead = it + stages - 1;
    if (ahead < tiles) {
      const int stage = ahead % stages;
      const std::int64_t k0 = tile_at(ahead) * BN;
      load_tile<T, D, BN, kThreads>(k_ring + stage * BN * D, k_base, k0, seq, kv_stride);
      load_tile<T, D, BN, kThreads>(v_ring + stage * BN * D, v_base, k0, seq, kv_stride);
    }
    cp_async_commit();
    // it + stages groups committed; all but the newest stages - 1 done: tile `it` has landed.
    if (stages == 3) cp_async_wait<2>();
    else cp_async_wait<1>();
    __syncthreads();

    if (it == 0) {
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        const int m = lane / 8, row = warp * 16 + (m & 1) * 8 + lane % 8, col = kk * 16 + (m >> 1) * 8;
        ldmatrix_x4(q_frag[kk], smem_address(q_tile + swizzle<D>(row, col)));
      }
    }
    const int stage = it % stages;
    const T* k_tile = k_ring + stage * BN * D;
    const T* v_tile = v_ring + stage * BN * D;
    const std::int64_t k0 = tile_at(it) * BN;

    // S = Q K^T: (16, BN) per warp.
    float s_acc[BN / 8][4];
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) s_acc[j][e] = 0;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
      for (int jp = 0; jp < BN / 16; ++jp) {
        const int m = lane / 8, row = jp * 16 + (m >> 1) * 8 + lane % 8, col = kk * 16 + (m & 1) * 8;
        std::uint32_t b[4];
        ldmatrix_x4(b, smem_address(k_tile + swizzle<D>(row, col)));
        mma_16816<T>(s_acc[2 * jp], q_frag[kk], b[0], b[1]);
        mma_16816<T>(s_acc[2 * jp + 1], q_frag[kk], b[2], b[3]);
      }
    }

    // Logits in log2 units, masked only on tiles that straddle an edge; the online softmax.
    const bool needs_mask = tile_needs_mask(p, q0, q0 + BM - 1, k0, BN);
    float rescale[2];
    softmax.step<BN>([&](int j, int e) -> float& { return s_acc[j][e]; }, logit, p, needs_mask, row_of, k0, c,
                     rescale);
#pragma unroll
    for (int j = 0; j < D / 8; ++j) {
      o_acc[j][0] *= rescale[0];
      o_acc[j][1] *= rescale[0];
      o_acc[j][2] *= rescale[1];
      o_acc[j][3] *= rescale[1];
    }

    // O += P V: P's A fragment for keys 16 kk2 .. +15 is S's C fragments 2 kk2 and 2 kk2 + 1.
#pragma unroll
    for (int kk2 = 0; kk2 < BN / 16; ++kk2) {
      std::uint32_t a[4];
      a[0] = pack2<T>(s_acc[2 * kk2][0], s_acc[2 * kk2][1]);
      a[1] = pack2<T>(s_acc[2 * kk2][2], s_acc[2 * kk2][3]);
      a[2] = pack2<T>(s_acc[2 * kk2 + 1][0], s_acc[2 * kk2 + 1][1]);
      a[3] = pack2<T>(s_acc[2 * kk2 + 1][2], s_acc[2 * kk2 + 1][3]);
#pragma unroll
      for (int jp = 0; jp < D / 16; ++jp) {
        const int m = lane / 8, row = kk2 * 16 + (m & 1) * 8 + lane % 8, col = jp * 16 + (m >> 1) * 8;
        std::uint32_t b[4];
        ldmatrix_x4_trans(b, smem_address(v_tile + swizzle<D>(row, col)));
        mma_16816<T>(o_acc[2 * jp], a, b[0], b[1]);
        mma_16816<T>(o_acc[2 * jp + 1], a, b[2], b[3]);
      }
    }
    __syncthreads();  // every warp is done with this stage before it is refilled
  }
  cp_async_wait<0>();  // no copy may still target shared memory when the block exits

  store_output<T, D>(softmax, [&](int j, int e) { return o_acc[j][e]; }, p, batch, head, start, row_of, c, o, lse);
}

}  // namespace flash
}  // namespace kwb
