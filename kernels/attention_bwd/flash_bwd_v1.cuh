// The FlashAttention-2 backward kernels of fused_v1 (see fused_v1_fa2_mma_atomic_dq.cu for the
// why and the napkin math): a preprocess (D_i = do_i . o_i, the dQ accumulator zeroed), the main
// kernel (one block per (key tile of BN keys, kv head, batch), dK and dV in registers, dQ added
// into an fp32 accumulator with atomics) and a last pass (dQ accumulator -> dq in T, scaled).
//
// The main kernel computes the transposed scores, S^T = K Q^T, so that the M dimension of every
// mma is the block's keys: BN / 16 warps each own 16 key rows, for which they keep dK and dV
// (16 x D each, fp32 C fragments) over the whole loop. Per step (query head of the group, query
// tile of BM rows), each warp (A = its 16 keys, N = the tile's BM queries, in passes of kCols):
//   S^T  (16 x BM)  = K_w Q^T        A: K rows (ldmatrix),        B: Q [query][d] (ldmatrix)
//   dP^T (16 x BM)  = V_w dO^T       A: V rows (ldmatrix),        B: dO [query][d] (ldmatrix)
//   P^T  = exp(l - lse_query), dS^T = P^T (dP^T - D_query) l'(s), elementwise in fp32, with lse
//          and D indexed by the column (query), 0 where masked or past seq
//   dV (16 x D)    += P^T dO         A: P^T from the S^T C fragments (registers, as the forward's
//                                    P), B: dO [query][d] = [k][n]  (ldmatrix.trans)
//   dK (16 x D)    += dS^T Q         A: dS^T from the dP^T C fragments, B: Q (ldmatrix.trans)
// That is why the keys are the M dimension: dV = P^T dO and dK = dS^T Q then take P^T and dS^T as
// row-major A operands straight from the accumulators, with no transpose. dQ = dS K needs dS
// (queries as rows), which no warp holds whole (each has 16 of its keys): dS^T goes to shared
// memory in T ([key][query], swizzled), and after a barrier warp w reads the A fragments of dS
// rows 16 w .. 16 w + 15 (queries) by ldmatrix.trans of that tile (a stored 8 x 8 block of keys
// x queries, transposed on load, gives thread t query t / 4, keys 2 (t % 4), +1: the A layout),
// multiplies by K [key][d] = [k][n] (ldmatrix.trans, B) and adds its 16 x D into the fp32 dQ
// accumulator with float2 atomics (red.global.add.v2.f32), 16 columns at a time.
//
// Scale: dK's accumulators are multiplied by `scale` in fp32 before rounding to T, dQ's in the
// last pass; the operands P and dS are rounded to T unscaled (1 / sqrt(128) is no power of 2).
//
// Packed sequences (attention_varlen_bwd's fused_v1_..._varlen): the main kernel's body is shared
// by flash_bwd_v1 (dense) and flash_bwd_v1_varlen, which enters its block's sequence from
// cu_seqlens; the preprocess and the last pass run as they are over the packed tokens.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/flash_fwd_v1.cuh"  // load_tile
#include "kernels/attention_fwd/flash_mma.cuh"
#include "kernels/attention_fwd/flash_softmax.cuh"  // fast_exp2, kLog2e, tile_needs_mask

namespace kwb {
namespace flash {

// Shared memory of flash_bwd_v1: K and V (BN, D) once; a 2-stage ring of Q and dO (BM, D) and of
// lse and D (BM) fp32; dS^T (BN, BM) in T.
template <int D, int BM, int BN>
constexpr int bwd_smem_bytes(int elem_bytes = 2) {
  return (2 * BN * D + 2 * 2 * BM * D + BN * BM) * elem_bytes + 2 * 2 * BM * 4;
}

// AttentionParams::visible(i, j) and i < seq (query rows past seq, a tail tile's padding), in
// 32-bit arithmetic on the offset i - j, for the per-element mask: causal j <= i; window w:
// i - j < w and, without causal, j - i < w (a window of seq or more hides nothing, so it is
// clamped to seq).
struct PairMask {
  int seq = 0, window = 0;
  bool causal = false;

  __host__ __device__ static PairMask of(const AttentionParams& p) {
    return {static_cast<int>(p.seq), static_cast<int>(p.window < p.seq ? p.window : p.seq),
            p.causal};
  }
  __host__ __device__ bool operator()(int i, int j) const {
    const int diff = i - j;
    return i < seq && j < seq && (!causal || diff >= 0) &&
           (window == 0 || (diff < window && (causal || -diff < window)));
  }
};

// 4 bytes global -> shared; when !valid, 4 zero bytes (nothing read). For lse and D rows, whose
// start (batch, head, query tile) is not 16-byte aligned for every seq.
__device__ __forceinline__ void cp_async_4(std::uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
               "r"(valid ? 4 : 0)
               : "memory");
}

// Two T in one register (lo in the low half) as floats.
template <class T>
__device__ __forceinline__ float2 unpack2(std::uint32_t v) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&v));
  } else {
    return __half22float2(*reinterpret_cast<const __half2*>(&v));
  }
}

// address[0] += x, address[1] += y (address 8-byte aligned): one vector reduction on sm_90.
__device__ __forceinline__ void atomic_add2(float* address, float x, float y) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float2*>(address), make_float2(x, y));
#else
  atomicAdd(address, x);
  atomicAdd(address + 1, y);
#endif
}

// ldmatrix row addresses in a swizzled [rows][D] tile of 2-byte elements, split into what the
// lane decides (once, outside the loops) and what the loops decide (an XOR and an add of
// constants), so that the compiler keeps a register or two per pattern instead of one per
// (row block, column block). In every x4 pattern here a lane reads row r0 + lane_row (r0 % 8 == 0,
// lane_row % 8 == lane % 8) at column 16 kk + 8 half (half 0 or 1): swizzle<D> puts that chunk
// at (2 kk + half) ^ (lane_row % 8) = 2 kk ^ (half ^ lane_row % 8), so its byte offset is
//   2 swizzle<D>(r0 + lane_row, 16 kk + 8 half) = (lane_offset ^ 32 kk) + 2 D r0,
// lane_offset = 2 D lane_row + 16 (half ^ lane_row % 8): the XOR touches bits 5 to 7 only
// (32 kk < 2 D), below the row's bits, so it commutes with the row's add.
template <int D>
__host__ __device__ __forceinline__ std::uint32_t ldsm_lane_offset(int lane_row, int half) {
  return static_cast<std::uint32_t>(lane_row * 2 * D + ((half ^ (lane_row & 7)) << 4));
}
template <int D>
__host__ __device__ __forceinline__ std::uint32_t ldsm_offset(std::uint32_t lane_offset, int r0,
                                                              int kk) {
  return (lane_offset ^ static_cast<std::uint32_t>(kk << 5)) +
         static_cast<std::uint32_t>(r0 * 2 * D);
}

constexpr int kBwdPrepThreads = 256;

// Launch 1: D_i = sum_e do_ie o_ie in fp32 into d_sum [b, h, s], and the dQ accumulator's row
// zeroed. D / 8 threads per row of [b, s, h] (16 bytes of o and do each), reduced by shuffles
// within their aligned group of lanes.
template <class T, int D>
__global__ void __launch_bounds__(kBwdPrepThreads)
    flash_bwd_preprocess(const T* __restrict__ o, const T* __restrict__ dout,
                         float* __restrict__ d_sum, float* __restrict__ dq_accum,
                         AttentionParams p) {
  constexpr int kPerRow = D / 8;
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * kBwdPrepThreads + threadIdx.x;
  const std::int64_t rows = p.batch * p.seq * p.heads;
  const std::int64_t row = t / kPerRow;
  const int part = static_cast<int>(t % kPerRow);
  float sum = 0;
  if (row < rows) {
    const uint4 ov = *reinterpret_cast<const uint4*>(o + row * D + part * 8);
    const uint4 dv = *reinterpret_cast<const uint4*>(dout + row * D + part * 8);
    const std::uint32_t ow[4] = {ov.x, ov.y, ov.z, ov.w}, dw[4] = {dv.x, dv.y, dv.z, dv.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 a = unpack2<T>(ow[i]), b = unpack2<T>(dw[i]);
      sum = fmaf(a.x, b.x, fmaf(a.y, b.y, sum));
    }
    float4* acc = reinterpret_cast<float4*>(dq_accum + row * D + part * 8);
    acc[0] = make_float4(0, 0, 0, 0);
    acc[1] = make_float4(0, 0, 0, 0);
  }
  // Every lane reaches the shuffles (rows past the end add 0).
#pragma unroll
  for (int offset = kPerRow / 2; offset > 0; offset /= 2)
    sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (row < rows && part == 0) {
    const std::int64_t head = row % p.heads, token = row / p.heads;
    const std::int64_t i = token % p.seq, batch = token / p.seq;
    d_sum[(batch * p.heads + head) * p.seq + i] = sum;
  }
}

// Launch 3: dq = scale * dq_accum rounded to T, 8 values per thread and iteration.
template <class T>
__global__ void __launch_bounds__(kBwdPrepThreads)
    flash_bwd_convert_dq(const float* __restrict__ dq_accum, T* __restrict__ dq, std::int64_t n8,
                         float scale) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kBwdPrepThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kBwdPrepThreads + threadIdx.x;
       i < n8; i += stride) {
    const float4 lo = reinterpret_cast<const float4*>(dq_accum)[2 * i];
    const float4 hi = reinterpret_cast<const float4*>(dq_accum)[2 * i + 1];
    uint4 out;
    out.x = pack2<T>(lo.x * scale, lo.y * scale);
    out.y = pack2<T>(lo.z * scale, lo.w * scale);
    out.z = pack2<T>(hi.x * scale, hi.y * scale);
    out.w = pack2<T>(hi.z * scale, hi.w * scale);
    reinterpret_cast<uint4*>(dq)[i] = out;
  }
}

// Launch 2's body, for the kernels below (dense and packed). Grid (key tiles, kv heads, batch);
// BN / 16 warps. Causal: key tile 0 is seen by the most queries, so the natural order already
// starts the longest blocks first.
//
// kPacked (attention_varlen_bwd): the block's sequence b = blockIdx.z holds tokens [start, start +
// L) of the packed [total, h, d] tensors (p.enter_sequence: p.seq becomes L, every mask and tail
// below then reads L), lse and D are [h, total] (row i of head h at h * total + start + i); the
// grid is sized for the longest sequence, so a block whose key tile starts past L (all of an empty
// sequence's) leaves before loading anything. A template parameter, not a branch on p.cu_seqlens,
// so that the dense kernel's code is what it was (same PTX: the dense op must not slow down).
template <class T, int D, int BM, int BN, bool kPacked>
__device__ __forceinline__ void flash_bwd_v1_body(const T* __restrict__ q, const T* __restrict__ k,
                                                  const T* __restrict__ v, const T* __restrict__ dout,
                                                  const float* __restrict__ lse,
                                                  const float* __restrict__ d_sum,
                                                  float* __restrict__ dq_accum, T* __restrict__ dk,
                                                  T* __restrict__ dv, AttentionParams p) {
  constexpr int kThreads = BN / 16 * 32;
  // dQ: warp w owns query rows 16 w .. of the tile, so there must be as many 16-row query slices
  // as 16-row key slices.
  static_assert(BM == BN, "the dQ step gives each warp 16 of the tile's query rows");
  // Query columns of S^T and dP^T per pass: at d = 128 the dK and dV accumulators take 128
  // registers, and S^T and dP^T of 64 (or 32) queries more spill (ptxas -v); 16 do not, at the
  // cost of reloading the K and V A fragments once per 16 queries instead of once per 64.
  constexpr int kCols = D == 128 ? 16 : BM;
  static_assert(BM % kCols == 0 && kCols % 16 == 0, "passes of whole 16-query slices");
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* k_tile = reinterpret_cast<T*>(smem_raw);                     // (BN, D)
  T* v_tile = k_tile + BN * D;                                    // (BN, D)
  T* q_ring = v_tile + BN * D;                                    // (2, BM, D)
  T* do_ring = q_ring + 2 * BM * D;                               // (2, BM, D)
  T* ds_tile = do_ring + 2 * BM * D;                              // (BN, BM): dS^T, [key][query]
  float* lse_ring = reinterpret_cast<float*>(ds_tile + BN * BM);  // (2, BM)
  float* dsum_ring = lse_ring + 2 * BM;                           // (2, BM)

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, c = lane % 4,
            m = lane / 8;  // m: the 8 x 8 matrix lane gives the address of
  // The sequence's first token among the tokens (dense: batch * seq, below, in the order the dense
  // kernel always computed it).
  std::int64_t first_token = 0;
  if constexpr (kPacked) {
    first_token = p.enter_sequence(blockIdx.z);
    if (static_cast<std::int64_t>(blockIdx.x) * BN >= p.seq) return;
  }
  // Positions within a sequence in 32 bits (refuse() keeps seq far below 2^31); offsets into the
  // tensors in 64.
  const int seq = static_cast<int>(p.seq), group = static_cast<int>(p.heads / p.kv_heads);
  const int n0 = static_cast<int>(blockIdx.x) * BN;
  const std::int64_t kv = blockIdx.y, batch = blockIdx.z;
  const std::int64_t q_stride = p.heads * D, kv_stride = p.kv_heads * D;
  if constexpr (!kPacked) first_token = batch * p.seq;
  // The group's first query head: head hg of the group is hg * D further in Q, dO and the dQ
  // accumulator ([b, s, h, d] or [total, h, d]), hg * seq (hg * total packed) further in lse and
  // D ([b, h, s] or [h, total]).
  const std::int64_t q_rows0 = (first_token * p.heads + kv * group) * D;
  const std::int64_t vec0 =
      kPacked ? kv * group * p.total + first_token : (batch * p.heads + kv * group) * p.seq;

  // Query tiles that see any key of this tile (the queries seeing key j form an interval whose ends
  // grow with j, and consecutive intervals overlap: their union is one interval).
  const int last_key = (n0 + BN < seq ? n0 + BN : seq) - 1;
  const int tile_begin = static_cast<int>(p.first_query(n0) / BM);
  const int q_tiles = static_cast<int>((p.end_query(last_key) + BM - 1) / BM) - tile_begin;
  const int steps = group * q_tiles;  // (head of the group, query tile), tile fastest

  // One step's Q and dO tiles (rows past seq zero-filled) and its lse and D rows into `stage`.
  auto load_step = [&](int hg, int tile, int stage) {
    const int m0 = (tile_begin + tile) * BM;
    load_tile<T, D, BM, kThreads>(q_ring + stage * BM * D, q + q_rows0 + hg * D, m0, seq, q_stride);
    load_tile<T, D, BM, kThreads>(do_ring + stage * BM * D, dout + q_rows0 + hg * D, m0, seq,
                                  q_stride);
    const std::int64_t row = vec0 + static_cast<std::int64_t>(hg) * (kPacked ? p.total : seq);
    for (int r = threadIdx.x; r < 2 * BM; r += kThreads) {
      const bool is_lse = r < BM;
      const int i = is_lse ? r : r - BM;
      const bool valid = m0 + i < seq;
      const float* src = (is_lse ? lse : d_sum) + row + (valid ? m0 + i : 0);
      cp_async_4(smem_address((is_lse ? lse_ring : dsum_ring) + stage * BM + i), src, valid);
    }
  };

  // Prologue: K and V ride with step 0's tiles in one commit group.
  const std::int64_t kv_rows0 = (first_token * p.kv_heads + kv) * D;
  load_tile<T, D, BN, kThreads>(k_tile, k + kv_rows0, n0, seq, kv_stride);
  load_tile<T, D, BN, kThreads>(v_tile, v + kv_rows0, n0, seq, kv_stride);
  load_step(0, 0, 0);
  cp_async_commit();

  const LogitMap logit = LogitMap::of(p);
  const PairMask visible = PairMask::of(p);
  const int key_of[2] = {n0 + warp * 16 + g, n0 + warp * 16 + g + 8};  // C rows g, g + 8

  // ldmatrix addresses (ldsm_offset): the lane's part of the two x4 patterns. a_lane: rows
  // (m & 1) * 8 + lane % 8, column half m >> 1 (A fragments, and B by .trans from [k][n] tiles);
  // b_lane: rows (m >> 1) * 8 + lane % 8, column half m & 1 (B from [n][k] tiles, and A by
  // .trans from the [key][query] dS^T tile).
  const std::uint32_t a_lane = ldsm_lane_offset<D>((m & 1) * 8 + lane % 8, m >> 1);
  const std::uint32_t b_lane = ldsm_lane_offset<D>((m >> 1) * 8 + lane % 8, m & 1);
  const std::uint32_t ds_lane = ldsm_lane_offset<BM>((m >> 1) * 8 + lane % 8, m & 1);
  const std::uint32_t k_addr = smem_address(k_tile), v_addr = smem_address(v_tile);
  const std::uint32_t ds_addr = smem_address(ds_tile);

  float dk_acc[D / 8][4];  // (16 keys, D) in C fragments
  float dv_acc[D / 8][4];  // (16 keys, D)
#pragma unroll
  for (int j = 0; j < D / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) dk_acc[j][e] = dv_acc[j][e] = 0;

  int hg = 0, tile = 0;  // this step's head of the group and query tile (of q_tiles)
  for (int step = 0; step < steps; ++step) {
    const int stage = step & 1;
    int next_hg = hg, next_tile = tile + 1;
    if (next_tile == q_tiles) next_tile = 0, ++next_hg;
    // This step's group is the only one in flight. The barrier also means every warp is past the
    // previous step: its stage (refilled next) and ds_tile (rewritten below) are free.
    cp_async_wait<0>();
    __syncthreads();
    if (step + 1 < steps) load_step(next_hg, next_tile, stage ^ 1);
    cp_async_commit();

    const std::uint32_t q_addr = smem_address(q_ring + stage * BM * D);
    const std::uint32_t do_addr = smem_address(do_ring + stage * BM * D);
    const float* lse_row = lse_ring + stage * BM;
    const float* dsum_row = dsum_ring + stage * BM;
    const int m0 = (tile_begin + tile) * BM;

    const bool needs_mask = m0 + BM > seq || tile_needs_mask(p, m0, m0 + BM - 1, n0, BN);

    // The tile's queries in passes of kCols columns (fewer live accumulators at d = 128).
#pragma unroll 1
    for (int c0 = 0; c0 < BM; c0 += kCols) {
      // S^T = K Q^T and dP^T = V dO^T: (16 keys, kCols queries) per warp. A: the warp's 16 rows
      // of K (V); B (k = d, n = query) from the [query][d] tiles by plain ldmatrix, as the
      // forward's K.
      float s_acc[kCols / 8][4];
      float dp_acc[kCols / 8][4];
#pragma unroll
      for (int j = 0; j < kCols / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) s_acc[j][e] = dp_acc[j][e] = 0;
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        std::uint32_t ka[4], va[4];
        ldmatrix_x4(ka, k_addr + ldsm_offset<D>(a_lane, warp * 16, kk));
        ldmatrix_x4(va, v_addr + ldsm_offset<D>(a_lane, warp * 16, kk));
#pragma unroll
        for (int jp = 0; jp < kCols / 16; ++jp) {
          const std::uint32_t offset = ldsm_offset<D>(b_lane, c0 + jp * 16, kk);
          std::uint32_t b[4];
          ldmatrix_x4(b, q_addr + offset);
          mma_16816<T>(s_acc[2 * jp], ka, b[0], b[1]);
          mma_16816<T>(s_acc[2 * jp + 1], ka, b[2], b[3]);
          ldmatrix_x4(b, do_addr + offset);
          mma_16816<T>(dp_acc[2 * jp], va, b[0], b[1]);
          mma_16816<T>(dp_acc[2 * jp + 1], va, b[2], b[3]);
        }
      }

      // P^T into s_acc, dS^T into dp_acc. Element (j, e): key key_of[e >> 1], query column
      // c0 + 8 j + 2 c + (e & 1). Masked per element only on tiles that straddle an edge of the
      // mask or of the sequence (query rows past seq: zero Q and dO, but their lse and D are no
      // answer). The soft-cap and the mask are decided here, once per pass, with the elements'
      // loop compiled for each: tested per element they made the compiler branch around every
      // score.
      auto probs_and_ds = [&](auto capped_c, auto masked_c) {
        constexpr bool kCapped = decltype(capped_c)::value, kMasked = decltype(masked_c)::value;
#pragma unroll
        for (int j = 0; j < kCols / 8; ++j) {
          const int col = c0 + j * 8 + 2 * c;
          const float2 lse2 = *reinterpret_cast<const float2*>(lse_row + col);
          const float2 dsum2 = *reinterpret_cast<const float2*>(dsum_row + col);
          const float lse_log2[2] = {lse2.x * kLog2e, lse2.y * kLog2e};
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const float s = s_acc[j][e];
            float dlogit;  // dl / ds
            float prob = logit.backward_prob<kCapped>(s, lse_log2[e & 1], dlogit);
            if constexpr (kMasked) {
              if (!visible(m0 + col + (e & 1), key_of[e >> 1])) prob = 0;
            }
            s_acc[j][e] = prob;
            const float ds = prob * (dp_acc[j][e] - ((e & 1) ? dsum2.y : dsum2.x));
            dp_acc[j][e] = kCapped ? ds * dlogit : ds;
          }
        }
      };
      with_cap_and_mask(logit.capped, needs_mask, probs_and_ds);

      // dV += P^T dO and dK += dS^T Q: (16 keys, D). A for queries c0 + 16 kk2 .. + 15 is C
      // fragments 2 kk2 and 2 kk2 + 1 rounded to T (the forward's P V); B (k = query, n = d)
      // from the [query][d] tiles by ldmatrix.trans, as the forward's V.
#pragma unroll
      for (int kk2 = 0; kk2 < kCols / 16; ++kk2) {
        std::uint32_t pa[4], dsa[4];
        pa[0] = pack2<T>(s_acc[2 * kk2][0], s_acc[2 * kk2][1]);
        pa[1] = pack2<T>(s_acc[2 * kk2][2], s_acc[2 * kk2][3]);
        pa[2] = pack2<T>(s_acc[2 * kk2 + 1][0], s_acc[2 * kk2 + 1][1]);
        pa[3] = pack2<T>(s_acc[2 * kk2 + 1][2], s_acc[2 * kk2 + 1][3]);
        dsa[0] = pack2<T>(dp_acc[2 * kk2][0], dp_acc[2 * kk2][1]);
        dsa[1] = pack2<T>(dp_acc[2 * kk2][2], dp_acc[2 * kk2][3]);
        dsa[2] = pack2<T>(dp_acc[2 * kk2 + 1][0], dp_acc[2 * kk2 + 1][1]);
        dsa[3] = pack2<T>(dp_acc[2 * kk2 + 1][2], dp_acc[2 * kk2 + 1][3]);
        // dS^T rows g and g + 8 of this warp, queries c0 + 16 kk2 + 2 c (+1) and + 8: to shared
        // memory for dQ (the same four registers: the A layout is two C fragments side by side).
        const int ds_row = warp * 16 + g, ds_col = c0 + kk2 * 16 + 2 * c;
        *reinterpret_cast<std::uint32_t*>(ds_tile + swizzle<BM>(ds_row, ds_col)) = dsa[0];
        *reinterpret_cast<std::uint32_t*>(ds_tile + swizzle<BM>(ds_row + 8, ds_col)) = dsa[1];
        *reinterpret_cast<std::uint32_t*>(ds_tile + swizzle<BM>(ds_row, ds_col + 8)) = dsa[2];
        *reinterpret_cast<std::uint32_t*>(ds_tile + swizzle<BM>(ds_row + 8, ds_col + 8)) = dsa[3];
#pragma unroll
        for (int jp = 0; jp < D / 16; ++jp) {
          const std::uint32_t offset = ldsm_offset<D>(a_lane, c0 + kk2 * 16, jp);
          std::uint32_t b[4];
          ldmatrix_x4_trans(b, do_addr + offset);
          mma_16816<T>(dv_acc[2 * jp], pa, b[0], b[1]);
          mma_16816<T>(dv_acc[2 * jp + 1], pa, b[2], b[3]);
          ldmatrix_x4_trans(b, q_addr + offset);
          mma_16816<T>(dk_acc[2 * jp], dsa, b[0], b[1]);
          mma_16816<T>(dk_acc[2 * jp + 1], dsa, b[2], b[3]);
        }
      }
    }
    __syncthreads();  // dS^T whole in shared memory

    // dQ (queries 16 w .. 16 w + 15, D) += dS K. A (m = query, k = key) from the [key][query]
    // dS^T tile by ldmatrix.trans: matrices (keys 0-7, queries 0-7), (keys 0-7, queries 8-15),
    // (keys 8-15, queries 0-7), (keys 8-15, queries 8-15) are a0..a3. B (k = key, n = d) from K
    // [key][d] by ldmatrix.trans.
    std::uint32_t ds_frag[BN / 16][4];
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
      ldmatrix_x4_trans(ds_frag[kk], ds_addr + ldsm_offset<BM>(ds_lane, kk * 16, warp));
    }
    float* dq_rows = dq_accum + q_rows0 + hg * D;
    const int query_of[2] = {m0 + warp * 16 + g, m0 + warp * 16 + g + 8};
#pragma unroll 1  // unrolled, it spills at d = 128 (ptxas -v)
    for (int jp = 0; jp < D / 16; ++jp) {
      float acc[2][4] = {};
#pragma unroll
      for (int kk = 0; kk < BN / 16; ++kk) {
        std::uint32_t b[4];
        ldmatrix_x4_trans(b, k_addr + ldsm_offset<D>(a_lane, kk * 16, jp));
        mma_16816<T>(acc[0], ds_frag[kk], b[0], b[1]);
        mma_16816<T>(acc[1], ds_frag[kk], b[2], b[3]);
      }
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        if (query_of[r] >= seq) continue;
        float* out = dq_rows + query_of[r] * q_stride + jp * 16 + 2 * c;
        atomic_add2(out, acc[0][2 * r], acc[0][2 * r + 1]);
        atomic_add2(out + 8, acc[1][2 * r], acc[1][2 * r + 1]);
      }
    }
    hg = next_hg;
    tile = next_tile;
  }
  cp_async_wait<0>();  // no copy may still target shared memory when the block exits

  // dK (scaled in fp32) and dV in T, the warp's 16 keys; rows past seq skipped.
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    if (key_of[r] >= seq) continue;
    T* dk_row = dk + kv_rows0 + key_of[r] * kv_stride;
    T* dv_row = dv + kv_rows0 + key_of[r] * kv_stride;
#pragma unroll
    for (int j = 0; j < D / 8; ++j) {
      *reinterpret_cast<std::uint32_t*>(dk_row + j * 8 + 2 * c) =
          pack2<T>(dk_acc[j][2 * r] * p.scale, dk_acc[j][2 * r + 1] * p.scale);
      *reinterpret_cast<std::uint32_t*>(dv_row + j * 8 + 2 * c) =
          pack2<T>(dv_acc[j][2 * r], dv_acc[j][2 * r + 1]);
    }
  }
}

// Launch 2, dense ([b, s, h, d] tensors, lse and D [b, h, s]).
template <class T, int D, int BM, int BN>
__global__ void __launch_bounds__(BN / 16 * 32)
    flash_bwd_v1(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                 const T* __restrict__ dout, const float* __restrict__ lse,
                 const float* __restrict__ d_sum, float* __restrict__ dq_accum, T* __restrict__ dk,
                 T* __restrict__ dv, AttentionParams p) {
  flash_bwd_v1_body<T, D, BM, BN, false>(q, k, v, dout, lse, d_sum, dq_accum, dk, dv, p);
}

// Launch 2 on packed sequences (p.cu_seqlens, p.total set): [total, h, d] tensors, lse and D
// [h, total]; grid (key tiles of the longest sequence, kv heads, batch).
template <class T, int D, int BM, int BN>
__global__ void __launch_bounds__(BN / 16 * 32)
    flash_bwd_v1_varlen(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                        const T* __restrict__ dout, const float* __restrict__ lse,
                        const float* __restrict__ d_sum, float* __restrict__ dq_accum,
                        T* __restrict__ dk, T* __restrict__ dv, AttentionParams p) {
  flash_bwd_v1_body<T, D, BM, BN, true>(q, k, v, dout, lse, d_sum, dq_accum, dk, dv, p);
}

}  // namespace flash
}  // namespace kwb
