// attention_bwd fused_v1_fa2_mma_atomic_dq: FlashAttention-2's backward (flash_bwd_v1.cuh) in
// three launches on a.stream: (1) D_i = do_i . o_i in fp32 and the fp32 dQ accumulator zeroed;
// (2) one block per (key tile of 64 keys, kv head, batch) that loads its K and V tiles once,
// keeps dK and dV for its keys in registers (fp32) over every query head of the group and every
// query tile that sees its keys (causal / window tiles skipped outright, masked per element only
// on the tiles that straddle an edge), recomputes P = exp(l - lse) from the saved lse, and adds
// its dQ = dS K into the accumulator with fp32 atomics; (3) dq = scale * accumulator in T. dK and
// dV are each one block's sums in a fixed order (deterministic); dQ's adds land in any order.
// mma.sync m16n8k16 in bf16 / fp16 with fp32 accumulate for all five GEMMs (S^T, dP^T, dV, dK,
// dQ), Q and dO tiles in a 2-stage cp.async ring in XOR-swizzled shared memory. Any seq: tail
// rows are zero-filled by cp.async and masked; nothing is written past seq.
//
// Why it should be faster than a materialised baseline: that one writes and reads b h s^2 scores,
// probabilities, dP and dS (each 4.3 GB at b4 h32 s4096 bf16, several passes each); here they
// never leave the SM, and only the visible half of a causal square is computed.
//
// Napkin math (b4 h32 s4096 d128 causal bf16): the forward's 4 b h d pairs = 5.5e11 FLOPs
// (pairs = s (s + 1) / 2 per (batch, head)), the backward's five GEMMs 2.5 x that = 1.4e12; the
// target is FA2's ~320 TFLOP/s backward: 4.3 ms. DRAM: q, k, v, o, do read and dq, dk, dv written
// once (8 x 134 MB = 1.1 GB) plus the fp32 dQ accumulator zeroed, reduced into and read
// (3 x 268 MB): ~1.9 GB, 0.6 ms at 3000 GB/s, under the compute time. What this first version is
// not, honestly:
//   - dQ's reductions: b h d pairs / BN fp32 adds (2.2e9 floats, 1.1e9 float2 reductions, 8.7 GB
//     of L2 atomic traffic), of the order of the whole compute time; a wider key tile (BN = 128,
//     8 warps) would halve it.
//   - shared-memory bandwidth: per 64-query step a warp issues ~228 ldmatrix.x4 (117 KB: every
//     warp reads all of Q and dO, twice each, and at d = 128 its K and V fragments once per 16
//     queries, see kCols) for 1.3 MFLOP, ~11 FLOP/byte: at 128 B/clk per SM a ceiling near
//     330 TFLOP/s before anything else.
//   - occupancy: 255 (d = 128) or 222 (d = 64) registers x 128 threads: 2 blocks, 8 warps per SM;
//     each (query tile, key tile) pair re-reads Q and dO from L2; mma.sync, no wgmma.
// Expect well under FA2's figure; v1 is the correct fused baseline for v2 to beat.
//
// Mapping (flash_bwd_v1.cuh has the derivation): warp w owns keys 16 w .. 16 w + 15 of the tile
// as the M rows of S^T = K Q^T and dP^T = V dO^T (16 keys x 64 queries, in passes of 16 queries
// at d = 128, fp32 C fragments), so that P^T and dS^T are dV's and dK's A operands straight from
// registers (16 x D accumulators each); dS^T goes through shared memory ([key][query]) and warp w
// computes dQ for queries 16 w .. 16 w + 15 from it by ldmatrix.trans.
//
// Shared memory (2 (BN + 2 BM) D + BN BM) * 2 + 4 BM * 4 bytes: K, V (64, D); 2 stages of Q, dO
// (64, D); dS^T (64, 64); 2 stages of lse and D (64 fp32): 105 KiB at d = 128, 57 KiB at d = 64.
// Workspace: D [b, h, s] fp32, then (256-byte aligned) the dQ accumulator [b, s, h, d] fp32.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <optional>
#include <string>

#include "harness/catalogue/cuda_check.hpp"
#include "kernels/attention_bwd/flash_bwd_passes.cuh"
#include "kernels/attention_bwd/flash_bwd_v1.cuh"
#include "kernels/attention_fwd/attention_params.cuh"

namespace kwb {
namespace {

constexpr int kBM = 64, kBN = 64;  // query rows per step, keys per block (4 warps)

template <class T, int D>
void launch_dim(const LaunchArgs& a, const AttentionParams& p) {
  const auto ws = flash::BwdWorkspace::of(AttentionAxes::of(a.shape));
  float* d_sum = ws.d_sum(a);
  float* dq_accum = ws.dq_accum(a);

  // 1: D and the zeroed accumulator.
  flash::launch_bwd_preprocess<T, D>(a, p, ws, "attention_bwd fused_v1 preprocess");

  // 2: dK, dV and the dQ accumulator.
  auto* kernel = &flash::flash_bwd_v1<T, D, kBM, kBN>;
  constexpr int kSmem = flash::bwd_smem_bytes<D, kBM, kBN>();
  static const cudaError_t attribute =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  cuda_check(attribute, "cudaFuncSetAttribute (flash_bwd_v1 shared memory)");
  const dim3 grid(static_cast<unsigned>((p.seq + kBN - 1) / kBN), static_cast<unsigned>(p.kv_heads),
                  static_cast<unsigned>(p.batch));
  kernel<<<grid, kBN / 16 * 32, kSmem, a.stream>>>(a.tensor<const T>("q"), a.tensor<const T>("k"),
                                                   a.tensor<const T>("v"), a.tensor<const T>("do"),
                                                   a.tensor<const float>("lse"), d_sum, dq_accum,
                                                   a.tensor<T>("dk"), a.tensor<T>("dv"), p);
  cuda_check_launch("attention_bwd fused_v1 main");

  // 3: dq = scale * accumulator, in T.
  flash::launch_bwd_convert_dq<T, D>(a, p, ws, "attention_bwd fused_v1 dq");
}

template <class T>
void launch(const LaunchArgs& a) {
  const AttentionParams p = AttentionParams::of(AttentionAxes::of(a.shape));
  if (p.head_dim == 64)
    launch_dim<T, 64>(a, p);
  else
    launch_dim<T, 128>(a, p);
}

std::optional<std::string> refuse(const Shape& s, DType) {
  const auto axes = AttentionAxes::of(s);
  return flash::refuse_flash_bwd(axes, axes.batch * axes.seq * axes.heads);
}

KWB_REGISTER_VARIANT(Variant{
    .op = "attention_bwd",
    .name = "fused_v1_fa2_mma_atomic_dq",
    .role = Role::fused,
    .description = "FlashAttention-2 backward: block per 64-key tile, dK/dV in registers over the "
                   "group's heads, "
                   "S^T = K Q^T so P^T and dS^T feed mma.sync directly, dQ by fp32 atomics, causal "
                   "tiles skipped",
    .launch = by_dtype_of<DType::fp16, DType::bf16>([]<class T>(const LaunchArgs& a) {
      launch<T>(a);
    }),
    .refuse = refuse,
    .workspace_bytes = [](const Shape& s, DType) { return flash::BwdWorkspace::of(AttentionAxes::of(s)).total; },
    .varies_run_to_run = true,
});

}  // namespace
}  // namespace kwb
