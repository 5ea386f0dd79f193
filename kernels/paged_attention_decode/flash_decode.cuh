// The flash-decoding kernel of paged_attention_decode (fused_v1 runs one key split, fused_v2
// several, combined in the same launch; fused_v3 equal runs of key tiles across sequences, below):
// one block per (key split, kv head x M tiles of 16 query rows, sequence), 4 warps per tile.
//
// A kv head's queries are few (group = heads / kv_heads query heads times q_len tokens: 4 for
// Llama-3-8B decoding), so they fill one m16 tile of mma.sync A fragments, and the four warps of a
// tile all hold it. The warps divide the keys instead: the block streams 64-key tiles of K and V
// through a cp.async ring, each row fetched from its page through the block table (any page size:
// the address is computed per row, one tile ahead, so the table's latency is off the copy's
// path), and warp w of a tile takes keys 16 w .. 16 w + 15 of each: S (16 x 16) = Q K^T, an online
// softmax of its own (attention_fwd's OnlineSoftmax, flash_softmax.cuh), P rounded to T as the A
// operand, O (16 x D) += P V. With more than 16 rows (speculative decoding's q_len times the
// group) M = 2 tiles share the block and its ring, so K and V are still read once; past 32 rows
// the next 32 take another block. At the end each tile's four warps merge (max, sum, O) through
// shared memory into the block's, which is either the output (one split) or a partial (normalised
// O and its log2-sum-exp, fp32); the last split of a (sequence, kv head, row block) to finish,
// found by an arrival counter, merges the partials of its rows (combine_splits).
//
// Why split: decoding reads each sequence's K and V once, so the work is memory-bound and only
// enough blocks in flight reach the DRAM roof. batch * kv_heads blocks (256 at b32 h32/8) fill an
// H100's 132 SMs twice; b8 at 16k tokens gives 64 blocks, 68 of the 132 SMs idle, unless each
// sequence's keys are cut into splits (flash-decoding). The combine costs one read of 4 (d + 1)
// bytes per split and output row (from the L2), next to 4 d bytes of K and V per key. It runs in
// the last split's block rather than a kernel of its own: at 134 MB of K and V (b1 at 32k tokens,
// about 50 us) a second kernel cost 5.5 us and the gap before it 2 us (2026-11-27 notebook).
//
// Masking: a row at position L - q_len + t sees keys j <= that position. AttentionParams with
// seq = the split's end and causal set gives exactly that (end_key(pos) = min(pos + 1, end)), so
// the rows' positions are the mask's "query index"; padding rows (past the kv head's queries) take
// position L - 1 and are never written.
#pragma once

#include <cstdint>

#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/flash_mma.cuh"
#include "kernels/attention_fwd/flash_softmax.cuh"
#include "kernels/common/l2_hints.cuh"
#include "kernels/paged_attention_decode/split_plan.hpp"

namespace kwb {
namespace flash_decode {

constexpr int kMaxStages = 4;  // kWarps, kRows, kTileKeys: split_plan.hpp

// What every block of a launch shares (a kernel argument, by value).
struct DecodeParams {
  std::int64_t heads = 0, kv_heads = 0, page_size = 0, pages_per_seq = 0;
  int q_len = 0, group = 0, rows = 0;  // rows = group * q_len query rows per kv head
  int row_blocks = 1;                  // blocks per kv head along its rows (M tiles each)
  int splits = 1;                      // key splits per (sequence, kv head)
  std::int64_t split_keys = 0;         // keys per split, a multiple of kTileKeys
  bool longest_first = false;          // grid z = i runs sequence order[i] (split_plan.hpp)
  bool kv_evict_first = false;         // K and V copied under an L2 evict_first policy (l2_hints.cuh)
  int piece_cap = 0;                   // fused_v3: pieces a (kv head, row block) has room for
  AttentionParams mask;                // causal, scale; seq is set per block
};

template <int D, int M>
constexpr int smem_bytes(int stages) {
  return (M * kRows * D + 2 * stages * kTileKeys * D) * 2;  // Q (16 M, D) + stages x [K, V (64, D)], 2-byte T
}

// Output row (b, t, head) of o [b, q_len, h, D], from query row r of kv head kv (r = g q_len + t:
// the group's heads outer, as the baseline's [b, h, q_len, D] copy orders them).
__device__ __forceinline__ std::int64_t output_row(const DecodeParams& p, std::int64_t b, int kv, int r) {
  const int g = r / p.q_len, t = r - g * p.q_len;
  return (b * p.q_len + t) * p.heads + kv * p.group + g;
}

// Rows of a 64-key tile each thread copies: chunk i * threads + t of the tile's 16-byte chunks.
template <int D, int M>
constexpr int rows_per_thread() {
  return kTileKeys * (D / 8) / (kWarps * 32 * M);
}

// Where this thread's rows of keys [k0, k0 + 64) sit in a cache of the sequence's pages (`table`):
// each row's page (-1 past `end`) and its offset inside the page's rows of kv head kv. Run a tile
// ahead of its copy, and the page is only read by that copy, so the table's loads stay in flight
// through the wait and the compute in between instead of stalling the thread where they are made.
template <int D, int M>
struct TileRows {
  std::int32_t page[rows_per_thread<D, M>()];
  std::int64_t within[rows_per_thread<D, M>()];
};

template <int D, int M>
__device__ __forceinline__ void locate_rows(TileRows<D, M>& rows, const std::int32_t* table, std::int64_t k0,
                                            std::int64_t end, const DecodeParams& p, int kv) {
  constexpr int kChunksPerRow = D / 8, kThreads = kWarps * 32 * M;
#pragma unroll
  for (int i = 0; i < rows_per_thread<D, M>(); ++i) {
    const int row = (i * kThreads + static_cast<int>(threadIdx.x)) / kChunksPerRow;
    const std::int64_t j = k0 + row;
    // 32-bit division: a context and a page fit in int (paged_attention_decode's invalid()).
    const int page_size = static_cast<int>(p.page_size), token = static_cast<int>(j < end ? j : 0);
    const int page_of_seq = token / page_size;
    rows.page[i] = j < end ? table[page_of_seq] : -1;
    rows.within[i] = (static_cast<std::int64_t>(token - page_of_seq * page_size) * p.kv_heads + kv) * D;
  }
}

// Copies the rows locate_rows found into swizzled [64][D] tiles of K and V (rows past the end
// zero-filled, so that they add 0 * 0 to S and 0 to P V, never NaN from stale memory).
template <class T, int D, int M>
__device__ __forceinline__ void load_kv_tile(T* k_tile, T* v_tile, const T* k_cache, const T* v_cache,
                                             const TileRows<D, M>& rows, const DecodeParams& p) {
  constexpr int kChunksPerRow = D / 8, kThreads = kWarps * 32 * M;
  const std::int64_t page_elems = p.page_size * p.kv_heads * D;
  const std::uint64_t policy = p.kv_evict_first ? l2::policy_evict_first() : 0;
#pragma unroll
  for (int i = 0; i < rows_per_thread<D, M>(); ++i) {
    const int chunk = i * kThreads + static_cast<int>(threadIdx.x);
    const int row = chunk / kChunksPerRow, col = (chunk % kChunksPerRow) * 8;
    const bool valid = rows.page[i] >= 0;
    const std::int64_t from = valid ? rows.page[i] * page_elems + rows.within[i] + col : 0;
    const std::uint32_t offset = static_cast<std::uint32_t>(flash::swizzle<D>(row, col));
    if (p.kv_evict_first) {  // uniform over the launch
      l2::cp_async_16(flash::smem_address(k_tile + offset), k_cache + from, valid, policy);
      l2::cp_async_16(flash::smem_address(v_tile + offset), v_cache + from, valid, policy);
    } else {
      flash::cp_async_16(flash::smem_address(k_tile + offset), k_cache + from, valid);
      flash::cp_async_16(flash::smem_address(v_tile + offset), v_cache + from, valid);
    }
  }
}

// Where split s's partial of a block's row i lies, in rows of D floats (its lse at the same
// index): slot base + s * stride. fused_v2 keeps an output row's splits together (out_row x splits
// + s); fused_v3 a piece's rows together: (kv_block x piece_cap + the sequence's first piece + s) x
// the block's rows + i, its pieces numbered by the plan.
struct PartialSlots {
  std::int64_t base = 0, stride = 1;
};
template <int M, bool kPieces>
__device__ __forceinline__ PartialSlots partial_slots(const DecodeParams& p, std::int64_t out_row, int i,
                                                      int kv_block, int first_piece) {
  if constexpr (kPieces)
    return {(static_cast<std::int64_t>(kv_block) * p.piece_cap + first_piece) * (M * kRows) + i, M * kRows};
  else
    return {out_row * p.splits, 1};
}

// The output rows [first_row, first_row + rows) of kv head kv of sequence b from the `used`
// splits that hold keys of the sequence: split s weighed by 2^(lse_s - max lse), the weighted
// normalised partials summed and rounded to T. It runs at the end of the last split's block, on
// the launch's critical path, so it is built for latency: a group of D / 4 lanes takes a row, one
// float4 of its columns a lane; the lanes load 32 (or 16) splits' lse at once, share them by
// shuffles and then have 8 partial loads in flight each; the max runs along (rescaling, as the
// online softmax does), so there is no second pass. The partials were written by other blocks of
// this launch: read through the L2 (ld.global.cg), never a stale L1 line. Split 0 always holds a
// visible key, so a row's max is finite from the first group of splits on.
template <class T, int D, int M, bool kPieces, int kThreads>
__device__ __forceinline__ void combine_splits(const float* partial_o, const float* partial_lse, int used, T* o,
                                               const DecodeParams& p, std::int64_t b, int kv, int first_row,
                                               int rows, int kv_block, int first_piece) {
  constexpr int kLanes = D / 4, kRowsAtOnce = kThreads / kLanes, kInFlight = 8;
  static_assert(kLanes == 16 || kLanes == 32, "a row's lanes lie within one warp");
  const int lane = threadIdx.x % kLanes;
  for (int i0 = 0; i0 < rows; i0 += kRowsAtOnce) {  // uniform over the block: shuffles see whole warps
    const int i = i0 + static_cast<int>(threadIdx.x) / kLanes;
    const bool live = i < rows;
    const std::int64_t out_row = output_row(p, b, kv, first_row + (live ? i : 0));
    const PartialSlots slots = partial_slots<M, kPieces>(p, out_row, live ? i : 0, kv_block, first_piece);
    const float* lse = partial_lse + slots.base;
    const float4* part = reinterpret_cast<const float4*>(partial_o + slots.base * D) + lane;
    float row_max = -INFINITY, sum = 0;
    float4 acc = make_float4(0, 0, 0, 0);
    for (int s0 = 0; s0 < used; s0 += kLanes) {
      const float mine = live && s0 + lane < used ? __ldcg(lse + (s0 + lane) * slots.stride) : -INFINITY;
      float group_max = mine;
#pragma unroll
      for (int offset = kLanes / 2; offset > 0; offset >>= 1)
        group_max = fmaxf(group_max, __shfl_xor_sync(0xffffffffu, group_max, offset, kLanes));
      const float new_max = fmaxf(row_max, group_max);
      // -inf while no split seen holds a visible key (never past the first group today: split 0
      // holds key 0, which every row sees): weights 0 then, never -inf - -inf = NaN.
      const bool any = new_max != -INFINITY;
      const float rescale = any ? flash::fast_exp2(row_max - new_max) : 0.0f;  // 0 on the first group
      acc = make_float4(acc.x * rescale, acc.y * rescale, acc.z * rescale, acc.w * rescale);
      sum *= rescale;
      row_max = new_max;
      const float weight = any ? flash::fast_exp2(mine - new_max) : 0.0f;  // 0 past `used`
#pragma unroll
      for (int j0 = 0; j0 < kLanes; j0 += kInFlight) {
        float4 v[kInFlight];
#pragma unroll
        for (int k = 0; k < kInFlight; ++k)
          v[k] = live && s0 + j0 + k < used ? __ldcg(part + (s0 + j0 + k) * slots.stride * (D / 4))
                                            : make_float4(0, 0, 0, 0);
#pragma unroll
        for (int k = 0; k < kInFlight; ++k) {
          const float w = __shfl_sync(0xffffffffu, weight, j0 + k, kLanes);
          sum += w;
          acc = make_float4(acc.x + w * v[k].x, acc.y + w * v[k].y, acc.z + w * v[k].z, acc.w + w * v[k].w);
        }
      }
    }
    if (!live) continue;
    const float inv = sum > 0 ? 1.0f / sum : 0.0f;
    T* out = o + out_row * D + lane * 4;
    *reinterpret_cast<std::uint32_t*>(out) = flash::pack2<T>(acc.x * inv, acc.y * inv);
    *reinterpret_cast<std::uint32_t*>(out + 2) = flash::pack2<T>(acc.z * inv, acc.w * inv);
  }
}

// One split of sequence b (fused_v1, fused_v2) or one piece (fused_v3, kPieces): keys [key_begin,
// key_end) of its `length`, split `split` of the `used` that hold keys of the sequence (fused_v3:
// the piece's count, numbered from the sequence's first piece, `first_piece`; fused_v2 works
// `used` out in the tail, after the last barrier, as it did before the pieces came). Writes o directly where the launch has
// one split (a sequence's only piece, with kPieces); else its partial, and the last of the `used`
// to arrive merges them.
template <class T, int D, int M, bool kPieces>
__device__ __forceinline__ void decode_split(const T* __restrict__ q, const T* __restrict__ k_cache,
                                             const T* __restrict__ v_cache, const std::int32_t* __restrict__ block_tables,
                                             T* __restrict__ o, float* __restrict__ partial_o,
                                             float* __restrict__ partial_lse, std::uint32_t* __restrict__ arrivals,
                                             const DecodeParams& p, int stages, std::int64_t b, std::int64_t length,
                                             std::int64_t key_begin, std::int64_t key_end, int split, int used,
                                             int first_piece) {
  constexpr int kThreads = kWarps * 32 * M;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* q_tile = reinterpret_cast<T*>(smem_raw);  // (16 M, D)
  T* k_ring = q_tile + M * kRows * D;          // (stages, 64, D)
  T* v_ring = k_ring + stages * kTileKeys * D;  // (stages, 64, D)

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int tile = warp / kWarps, quarter = warp % kWarps;  // the warp's row tile and key quarter
  const int g = lane / 4, c = lane % 4;
  const int kv = blockIdx.y / p.row_blocks;
  const int first_row = (blockIdx.y % p.row_blocks) * M * kRows;  // of the kv head's rows
  const std::int32_t* table = block_tables + b * p.pages_per_seq;
  const int tiles = static_cast<int>((key_end - key_begin + kTileKeys - 1) / kTileKeys);
  const bool direct = kPieces ? used == 1 : p.splits == 1;  // uniform over the block

  // Q's rows of this block (rows past the kv head's queries zero-filled), with tile 0.
  {
    constexpr int kChunksPerRow = D / 8;
    for (int chunk = threadIdx.x; chunk < M * kRows * kChunksPerRow; chunk += kThreads) {
      const int i = chunk / kChunksPerRow, col = (chunk % kChunksPerRow) * 8;
      const int r = first_row + i;
      const bool valid = r < p.rows;
      const T* src = valid ? q + output_row(p, b, kv, r) * D + col : q;
      flash::cp_async_16(flash::smem_address(q_tile + flash::swizzle<D>(i, col)), src, valid);
    }
  }
  TileRows<D, M> rows_at;
  for (int s = 0; s < stages - 1; ++s) {
    if (s < tiles) {
      locate_rows<D, M>(rows_at, table, key_begin + s * kTileKeys, key_end, p, kv);
      load_kv_tile<T, D, M>(k_ring + s * kTileKeys * D, v_ring + s * kTileKeys * D, k_cache, v_cache, rows_at, p);
    }
    flash::cp_async_commit();
  }
  if (stages - 1 < tiles)
    locate_rows<D, M>(rows_at, table, key_begin + static_cast<std::int64_t>(stages - 1) * kTileKeys, key_end, p, kv);

  AttentionParams mask = p.mask;
  mask.seq = key_end;
  const flash::LogitMap logit = flash::LogitMap::of(mask);
  std::int64_t row_of[2];  // the positions of this thread's two rows (g and g + 8 of its tile)
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int r = first_row + tile * kRows + g + 8 * half;
    row_of[half] = r < p.rows ? length - p.q_len + r % p.q_len : length - 1;
  }
  // Keys past the split's end, or past the earliest query's position, need the per-element mask.
  const std::int64_t first_masked = length - p.q_len + 1 < key_end ? length - p.q_len + 1 : key_end;

  std::uint32_t q_frag[D / 16][4];
  float o_acc[D / 8][4];
  flash::OnlineSoftmax softmax;
#pragma unroll
  for (int j = 0; j < D / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) o_acc[j][e] = 0;

  for (int it = 0; it < tiles; ++it) {
    // Copy the tile located last iteration, then locate the next one (its table loads overlap
    // the wait and the compute below).
    const int ahead = it + stages - 1;
    if (ahead < tiles) {
      const int stage = ahead % stages;
      load_kv_tile<T, D, M>(k_ring + stage * kTileKeys * D, v_ring + stage * kTileKeys * D, k_cache, v_cache,
                            rows_at, p);
    }
    flash::cp_async_commit();
    if (ahead + 1 < tiles)
      locate_rows<D, M>(rows_at, table, key_begin + static_cast<std::int64_t>(ahead + 1) * kTileKeys, key_end, p, kv);
    // it + stages groups committed; all but the newest stages - 1 done: tile `it` has landed.
    if (stages == 4) flash::cp_async_wait<3>();
    else if (stages == 3) flash::cp_async_wait<2>();
    else flash::cp_async_wait<1>();
    __syncthreads();

    if (it == 0) {
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        const int m = lane / 8, row = tile * kRows + (m & 1) * 8 + lane % 8, col = kk * 16 + (m >> 1) * 8;
        flash::ldmatrix_x4(q_frag[kk], flash::smem_address(q_tile + flash::swizzle<D>(row, col)));
      }
    }
    const int stage = it % stages;
    const T* k_tile = k_ring + stage * kTileKeys * D;
    const T* v_tile = v_ring + stage * kTileKeys * D;
    const std::int64_t k0 = key_begin + static_cast<std::int64_t>(it) * kTileKeys + quarter * 16;

    // S = Q K^T over this warp's 16 keys.
    float s_acc[2][4] = {};
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const int m = lane / 8, row = quarter * 16 + (m >> 1) * 8 + lane % 8, col = kk * 16 + (m & 1) * 8;
      std::uint32_t bk[4];
      flash::ldmatrix_x4(bk, flash::smem_address(k_tile + flash::swizzle<D>(row, col)));
      mma_16816<T>(s_acc[0], q_frag[kk], bk[0], bk[1]);
      mma_16816<T>(s_acc[1], q_frag[kk], bk[2], bk[3]);
    }
    float rescale[2];
    softmax.step<16>([&](int j, int e) -> float& { return s_acc[j][e]; }, logit, mask, k0 + 16 > first_masked,
                     row_of, k0, c, rescale);
#pragma unroll
    for (int j = 0; j < D / 8; ++j) {
      o_acc[j][0] *= rescale[0];
      o_acc[j][1] *= rescale[0];
      o_acc[j][2] *= rescale[1];
      o_acc[j][3] *= rescale[1];
    }
    // O += P V: P's A fragment is S's two C fragments, rounded to T.
    std::uint32_t a[4];
    a[0] = flash::pack2<T>(s_acc[0][0], s_acc[0][1]);
    a[1] = flash::pack2<T>(s_acc[0][2], s_acc[0][3]);
    a[2] = flash::pack2<T>(s_acc[1][0], s_acc[1][1]);
    a[3] = flash::pack2<T>(s_acc[1][2], s_acc[1][3]);
#pragma unroll
    for (int jp = 0; jp < D / 16; ++jp) {
      const int m = lane / 8, row = quarter * 16 + (m & 1) * 8 + lane % 8, col = jp * 16 + (m >> 1) * 8;
      std::uint32_t bv[4];
      flash::ldmatrix_x4_trans(bv, flash::smem_address(v_tile + flash::swizzle<D>(row, col)));
      mma_16816<T>(o_acc[2 * jp], a, bv[0], bv[1]);
      mma_16816<T>(o_acc[2 * jp + 1], a, bv[2], bv[3]);
    }
    __syncthreads();  // every warp is done with this stage before it is refilled
  }
  flash::cp_async_wait<0>();
  __syncthreads();

  // Merge each tile's four warps' (max, sum, O) through shared memory: O in the ring, the maxima
  // and sums where Q was (both free now; smem_bytes leaves room at any `stages` >= 2).
  float* red_o = reinterpret_cast<float*>(k_ring);            // (4 M warps, 16, D)
  float* red_max = reinterpret_cast<float*>(q_tile);          // (4 M, 16)
  float* red_sum = red_max + kWarps * M * kRows;              // (4 M, 16)
  static_assert(2 * kWarps * kRows * 4 <= kRows * D * 2, "the maxima and sums fit where Q was");
  static_assert(kWarps * M * kRows * D * 4 <= 2 * 2 * kTileKeys * D * 2, "the warps' O fit in a 2-stage ring");
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int i = g + 8 * half;
    const float total = softmax.total(half);
    if (c == 0) {
      red_max[warp * kRows + i] = softmax.row_max[half];
      red_sum[warp * kRows + i] = total;
    }
#pragma unroll
    for (int j = 0; j < D / 8; ++j) {
      red_o[(warp * kRows + i) * D + j * 8 + 2 * c] = o_acc[j][2 * half];
      red_o[(warp * kRows + i) * D + j * 8 + 2 * c + 1] = o_acc[j][2 * half + 1];
    }
  }
  __syncthreads();

  // Thread t: row t / 8 of the block's 16 M, D / 8 columns from (t % 8) D / 8; its tile's warps
  // are 4 (row / 16) .. + 3.
  constexpr int kCols = D / 8;
  const int i = threadIdx.x / 8, col0 = (threadIdx.x % 8) * kCols;
  const int r = first_row + i;
  const std::int64_t out_row = output_row(p, b, kv, r < p.rows ? r : 0);
  if (r < p.rows) {
    const int w0 = (i / kRows) * kWarps, ii = i % kRows;
    float row_max = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) row_max = fmaxf(row_max, red_max[(w0 + w) * kRows + ii]);
    // A row none of whose keys lies in this split (a later token's key past the earliest query's
    // position) has max -inf: weights 0, sum 0, O 0 and log-sum-exp -inf, which the combine weighs 0.
    const float use_max = row_max == -INFINITY ? 0.0f : row_max;
    float weight[kWarps], sum = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      weight[w] = flash::fast_exp2(red_max[(w0 + w) * kRows + ii] - use_max);
      sum += weight[w] * red_sum[(w0 + w) * kRows + ii];
    }
    const float inv = sum > 0 ? 1.0f / sum : 0.0f;
    float value[kCols];
#pragma unroll
    for (int e = 0; e < kCols; ++e) {
      float acc = 0;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) acc += weight[w] * red_o[((w0 + w) * kRows + ii) * D + col0 + e];
      value[e] = acc * inv;
    }
    if (direct) {
      T* out = o + out_row * D + col0;
#pragma unroll
      for (int e = 0; e < kCols; e += 2)
        *reinterpret_cast<std::uint32_t*>(out + e) = flash::pack2<T>(value[e], value[e + 1]);
      return;
    }
    const PartialSlots slots = partial_slots<M, kPieces>(p, out_row, i, blockIdx.y, first_piece);
    const std::int64_t slot = slots.base + split * slots.stride;
    float* out = partial_o + slot * D + col0;
#pragma unroll
    for (int e = 0; e < kCols; e += 4)
      *reinterpret_cast<float4*>(out + e) = make_float4(value[e], value[e + 1], value[e + 2], value[e + 3]);
    if (col0 == 0) partial_lse[slot] = sum > 0 ? row_max + log2f(sum) : -INFINITY;
  }
  if (direct) return;

  // The last split of this (sequence, kv head, row block) to arrive combines them all, in the same
  // launch: no second kernel, no gap between them, and the combine of one block overlaps the
  // other blocks' streaming. Each thread's partials are made visible device-wide before the block
  // counts itself in (the fence), and the last block fences again before it reads the others'.
  __threadfence();
  __syncthreads();
  if constexpr (!kPieces) {
    // Splits holding keys; never more than the grid has (a length past the planned context would
    // otherwise leave the counter short of `used` for good, and the rows unwritten).
    const std::int64_t holding = (length + p.split_keys - 1) / p.split_keys;
    used = static_cast<int>(holding < p.splits ? holding : p.splits);
  }
  __shared__ bool last;
  if (threadIdx.x == 0) {
    std::uint32_t* arrived = arrivals + (b * p.kv_heads + kv) * p.row_blocks + blockIdx.y % p.row_blocks;
    last = atomicAdd(arrived, 1u) == static_cast<std::uint32_t>(used - 1);
    if (last) atomicExch(arrived, 0u);  // every split of this launch has counted: the next launch starts from 0
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  combine_splits<T, D, M, kPieces, kThreads>(partial_o, partial_lse, used, o, p, b, kv, first_row,
                                    p.rows - first_row < M * kRows ? p.rows - first_row : M * kRows, blockIdx.y,
                                    first_piece);
}

// fused_v1 and fused_v2 (kPieces false): block (split, kv head x row block, sequence), order [b]
// (or null: grid z is the sequence), and with p.splits > 1 partial_o [b, q_len, h, splits, D],
// partial_lse [b, q_len, h, splits] (log2 units) and the arrival counters [b, kv_heads, row_blocks].
// fused_v3 (kPieces): block (worker, kv head x row block) runs the pieces [worker_first[x],
// worker_first[x + 1]) one after the other; partial_o [kv heads x row blocks, piece_cap, 16 M, D]
// and partial_lse likewise. The plan was made from these context_lens (read back in prepare()), so
// its pieces end where the sequences do. Two instantiations, not a branch: with both bodies in one
// kernel, fused_v1 and fused_v2 measured 2-7% slower than before the pieces came, likely from that
// (2026-11-27 notebook, stream-K section; not yet re-measured).
template <class T, int D, int M, bool kPieces>
__global__ void __launch_bounds__(kWarps * 32 * M)
    flash_decode(const T* __restrict__ q, const T* __restrict__ k_cache, const T* __restrict__ v_cache,
                 const std::int32_t* __restrict__ block_tables, const std::int32_t* __restrict__ context_lens,
                 T* __restrict__ o, const std::int32_t* __restrict__ order, const Piece* __restrict__ pieces,
                 const std::int32_t* __restrict__ worker_first, float* __restrict__ partial_o,
                 float* __restrict__ partial_lse, std::uint32_t* __restrict__ arrivals, DecodeParams p, int stages) {
  if constexpr (kPieces) {
    for (int i = worker_first[blockIdx.x]; i < worker_first[blockIdx.x + 1]; ++i) {
      const Piece piece = pieces[i];
      __syncthreads();  // the last piece's merge is done with the ring and Q's rows
      decode_split<T, D, M, true>(q, k_cache, v_cache, block_tables, o, partial_o, partial_lse, arrivals, p, stages,
                                  piece.seq, context_lens[piece.seq], piece.key_begin, piece.key_end, piece.index,
                                  piece.count, piece.first);
    }
  } else {
    const int split = blockIdx.x;
    const std::int64_t b = order != nullptr ? order[blockIdx.z] : blockIdx.z;
    const std::int64_t length = context_lens[b];
    const std::int64_t key_begin = split * p.split_keys;
    const std::int64_t key_end = key_begin + p.split_keys < length ? key_begin + p.split_keys : length;
    // A split past the sequence's end holds no key, and is neither counted nor combined.
    if (key_begin >= key_end) return;
    decode_split<T, D, M, false>(q, k_cache, v_cache, block_tables, o, partial_o, partial_lse, arrivals, p, stages, b,
                                 length, key_begin, key_end, split, 0, 0);
  }
}

}  // namespace flash_decode
}  // namespace kwb
