// attention_varlen_bwd fused_v1_fa2_mma_atomic_dq_varlen: attention_bwd's FlashAttention-2 backward
// (flash_bwd_v1.cuh; fused_v1_fa2_mma_atomic_dq.cu has the why and the mapping) on packed
// sequences, in the same three launches on a.stream:
//   (1) D_i = do_i . o_i and the dQ accumulator zeroed: the dense preprocess as it is, over the
//       packed tokens taken as one sequence of `total` (batch 1, seq total): its rows [total, h]
//       are the packed rows and its D [1, h, total] is the packed [h, total] layout of lse;
//   (2) flash_bwd_v1_varlen: the grid is the dense one for the longest sequence (key tiles x kv
//       heads x batch); each block reads its sequence's start and length from cu_seqlens
//       (p.enter_sequence), offsets K, V, Q, dO, dK, dV and the dQ accumulator's rows by the start,
//       reads lse and D at h * total + start + i, masks by the length, and leaves at once when its
//       key tile starts past the end (every block of an empty sequence does); a sequence of one
//       token, odd lengths and tails are the dense kernel's tail tiles (zero-filled, masked, never
//       written past the length);
//   (3) dq = scale * accumulator in T over the packed rows.
// Nothing crosses a sequence's boundary: a block reads and writes only its sequence's rows, so dK
// and dV of a key are its block's sums over the group's heads in a fixed order (deterministic), and
// dQ's atomics land only in the block's own sequence.
//
// Napkin math (b6 s4096 ragged h32/8 d128 causal bf16, lengths 1473-4096, 17.6k tokens): 1.2e12
// FLOPs of real pairs; at attention_bwd fused_v1's rate on dense causal shapes the same time per
// pair, as every block does the dense kernel's work on its own sequence. The grid is sized for the
// longest: of its 6 x 64 key tiles per kv head, the 106 past their sequence's end (28%) leave at
// once, a launch slot each, not a tile of work. DRAM: the packed tensors once (0.72 GB) plus the
// fp32 dQ accumulator zeroed, reduced into and read (3 x 288 MB).
//
// Workspace: D [h, total] fp32, then (256-byte aligned) the dQ accumulator [total, h, d] fp32.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "harness/catalogue/cuda_check.hpp"
#include "kernels/attention_bwd/flash_bwd_passes.cuh"
#include "kernels/attention_varlen_bwd/packed_bwd.hpp"
#include "kernels/attention_bwd/flash_bwd_v1.cuh"
#include "kernels/attention_fwd/attention_params.cuh"
#include "reference/attention_varlen_bwd.hpp"

namespace kwb {
namespace {

constexpr int kBM = 64, kBN = 64;  // attention_bwd fused_v1's tiles: query rows per step, keys per block

// The packed token count, summed once per case rather than per launch.
struct PackedTokens {
  std::int64_t total = 0;
};

template <class T, int D>
void launch_dim(const LaunchArgs& a, const AttentionParams& p) {
  const flash::BwdWorkspace ws = varlen::packed_bwd_workspace(a.shape);
  float* d_sum = ws.d_sum(a);
  float* dq_accum = ws.dq_accum(a);
  if (p.total * p.heads == 0) return;

  // 1: D and the zeroed accumulator, the packed tokens as one dense sequence (flash_bwd_passes.cuh).
  flash::launch_bwd_preprocess<T, D>(a, p, ws, "attention_varlen_bwd fused_v1 preprocess");

  // 2: dK, dV and the dQ accumulator, a block per (key tile of the longest sequence, kv head, sequence).
  auto* kernel = &flash::flash_bwd_v1_varlen<T, D, kBM, kBN>;
  constexpr int kSmem = flash::bwd_smem_bytes<D, kBM, kBN>();
  static const cudaError_t attribute =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  cuda_check(attribute, "cudaFuncSetAttribute (flash_bwd_v1_varlen shared memory)");
  const dim3 grid(static_cast<unsigned>((p.seq + kBN - 1) / kBN), static_cast<unsigned>(p.kv_heads),
                  static_cast<unsigned>(p.batch));
  kernel<<<grid, kBN / 16 * 32, kSmem, a.stream>>>(a.tensor<const T>("q"), a.tensor<const T>("k"),
                                                   a.tensor<const T>("v"), a.tensor<const T>("do"),
                                                   a.tensor<const float>("lse"), d_sum, dq_accum, a.tensor<T>("dk"),
                                                   a.tensor<T>("dv"), p);
  cuda_check_launch("attention_varlen_bwd fused_v1 main");

  // 3: dq = scale * accumulator, in T.
  flash::launch_bwd_convert_dq<T, D>(a, p, ws, "attention_varlen_bwd fused_v1 dq");
}

template <class T>
void launch(const LaunchArgs& a) {
  AttentionParams p = AttentionParams::of(varlen::VarlenAxes::of(a.shape).attention);
  p.cu_seqlens = a.tensor<const std::int32_t>("cu_seqlens");
  p.total = a.state_as<PackedTokens>().total;
  if (p.head_dim == 64)
    launch_dim<T, 64>(a, p);
  else
    launch_dim<T, 128>(a, p);
}

KWB_REGISTER_VARIANT(Variant{
    .op = varlen_bwd::kOp,
    .name = "fused_v1_fa2_mma_atomic_dq_varlen",
    .role = Role::fused,
    .description = "attention_bwd's FlashAttention-2 backward on packed sequences: each block offset by its "
                   "sequence's start, masked by its length, key tiles past the end skipped; dQ by fp32 atomics "
                   "into the packed rows",
    .launch = by_dtype_of<DType::fp16, DType::bf16>([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .refuse = [](const Shape& s, DType) { return varlen::refuse_packed_bwd(s); },
    .workspace_bytes = [](const Shape& s, DType) { return varlen::packed_bwd_workspace(s).total; },
    .varies_run_to_run = true,  // dQ's float atomics land in any order
    .prepare = [](const LaunchArgs& a) -> std::shared_ptr<void> {
      return std::make_shared<PackedTokens>(PackedTokens{varlen::VarlenAxes::of(a.shape).total()});
    },
});

}  // namespace
}  // namespace kwb
