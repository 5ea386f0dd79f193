// attention_varlen_bwd fused_v2_wgmma_tma_atomic_dq_varlen: attention_bwd's Hopper backward
// (flash_bwd_v2.cuh: a TMA producer warpgroup, two wgmma consumer warpgroups of 64 keys, dQ by fp32
// atomics) on packed sequences, between the shared passes (flash_bwd_passes.cuh) run over the
// packed tokens as one sequence. The tensor maps span the packed [total, heads, d] tokens as one
// batch; each block reads its sequence's start and length from cu_seqlens, offsets its TMA rows by
// the start, masks keys and queries past the length (the next sequence's tokens, loaded with the
// tile) like any past the end, and leaves at once when its key tile starts past it (an empty
// sequence's blocks all do). lse and D are [heads, total]; dK, dV and the dQ accumulator are written
// in the sequence's own packed rows only, so dK and dV stay deterministic.
//
// Why: fused_v1's varlen backward (mma.sync) ran 0.67-0.83x PyTorch's FlashAttention-2 varlen
// backward (measured 2026-11-27); the dense form of this kernel runs 1.03-1.39x FA2's dense
// backward. Napkin math (b6 s4096 ragged h32/8 d128 causal, 1.16e12 FLOPs of real pairs): at the
// dense kernel's ~350 TFLOP/s, ~3.3 ms against FA2 varlen's 4.5 ms.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "kernels/attention_bwd/flash_bwd_v2_launch.cuh"
#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_varlen_bwd/packed_bwd.hpp"
#include "kernels/attention_varlen_fwd/packed_params.hpp"
#include "reference/attention_varlen.hpp"
#include "reference/attention_varlen_bwd.hpp"

namespace kwb {
namespace {

std::optional<std::string> refuse(const Shape& s, DType) {
  // TMA coordinates are 32-bit signed: the packed rows, plus a tile past the last.
  if (varlen::VarlenAxes::of(s).total() > (std::int64_t{1} << 31) - 256)
    return "the packed tokens must fit a 32-bit TMA coordinate";
  return varlen::refuse_packed_bwd(s);
}

KWB_REGISTER_VARIANT(Variant{
    .op = varlen_bwd::kOp,
    .name = "fused_v2_wgmma_tma_atomic_dq_varlen",
    .role = Role::fused,
    .description = "attention_bwd's Hopper backward (TMA producer, two wgmma consumer warpgroups of 64 keys) on "
                   "packed sequences: tensor maps over the packed tokens, each block's rows offset by its "
                   "sequence's start and masked by its length, dQ by fp32 atomics into the packed rows",
    .launch = by_dtype_of<DType::fp16, DType::bf16>([]<class T>(const LaunchArgs& a) {
      flash::launch_flash_bwd_v2<T>(a, varlen::packed_params(a), varlen::packed_bwd_workspace(a.shape));
    }),
    .refuse = refuse,
    .workspace_bytes = [](const Shape& s, DType) { return varlen::packed_bwd_workspace(s).total; },
    .varies_run_to_run = true,  // dQ's float atomics land in any order
    .prepare = [](const LaunchArgs& a) { return flash::prepare_flash_bwd_v2(a, varlen::packed_params(a)); },
});

}  // namespace
}  // namespace kwb
