// attention_varlen_fwd fused_v2_wgmma_tma_varlen: attention_fwd's FlashAttention-3-style kernel
// (flash_fwd_v2.cuh: a TMA producer warpgroup, two wgmma consumer warpgroups in ping-pong) on packed
// sequences. The tensor maps span the packed [total, heads, d] tokens as one batch; each block reads
// its sequence's start and length from cu_seqlens, offsets its TMA rows by the start, masks keys past
// the length like any key past the end, and leaves at once when its query tile lies past it (an
// empty sequence's blocks all do). lse is written [heads, total].
//
// Why: fused_v1's varlen kernel (mma.sync) runs 0.58-0.66x PyTorch's FlashAttention-2 varlen
// forward (measured 2026-11-27); the dense form of this kernel runs ~1.07x FA2. Napkin math (b6
// s4096 ragged h32/8 d128 causal, 4.7e11 FLOPs of real pairs): at ~330 TFLOP/s, ~1.4 ms against
// FA2 varlen's ~1.5 ms. Keys past a sequence's end that share its last tile are the next
// sequence's tokens, loaded and masked: at most one tile a row block, as the dense kernel's tail.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/flash_fwd_v2_launch.cuh"
#include "kernels/attention_varlen_fwd/packed_params.hpp"
#include "reference/attention_varlen.hpp"

namespace kwb {
namespace {

std::optional<std::string> refuse(const Shape& s, DType) {
  const auto v = varlen::VarlenAxes::of(s);
  // (batch and heads within the grid: the op's own check.) TMA coordinates are 32-bit signed: the packed rows, plus a tile past the last.
  if (v.total() > (std::int64_t{1} << 31) - 256) return "the packed tokens must fit a 32-bit TMA coordinate";
  return std::nullopt;
}

KWB_REGISTER_VARIANT(Variant{
    .op = varlen::kOp,
    .name = "fused_v2_wgmma_tma_varlen",
    .role = Role::fused,
    .description = "attention_fwd's FlashAttention-3-style kernel (TMA producer, wgmma consumers in ping-pong) on "
                   "packed sequences: tensor maps over the packed tokens, each block's rows offset by its "
                   "sequence's start and masked by its length",
    .launch = by_dtype_of<DType::fp16, DType::bf16>([]<class T>(const LaunchArgs& a) {
      flash::launch_flash_fwd_v2<T>(a, varlen::packed_params(a));
    }),
    .refuse = refuse,
    .tunables = flash::flash_fwd_v2_tunables(),
    .prepare = [](const LaunchArgs& a) { return flash::prepare_flash_fwd_v2(a, varlen::packed_params(a)); },
});

}  // namespace
}  // namespace kwb
