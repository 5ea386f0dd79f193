// attention_varlen_fwd fused_v1_fa2_mma_cp_async_varlen: attention_fwd's FlashAttention-2 kernel
// (flash_fwd_v1.cuh) on packed sequences. The grid is the dense one for the longest sequence
// (ceil(seq / q_tile) x heads x batch); each block reads its sequence's start and length from
// cu_seqlens, offsets Q, K, V and O by the start, masks by the length, and leaves at once when its
// query tile lies past the end (an empty sequence's blocks all do). lse is written [heads, total].
//
// Napkin math (b8 s4096 ragged h32/8 d128 causal bf16, lengths 1473-4096): 5.7e11 FLOPs of real
// pairs; at attention_fwd fused_v1's ~210 TFLOP/s on dense causal shapes (measured 2026-11-23),
// ~2.7 ms. The grid is sized for the longest sequence: a third of its blocks (22618 of 32768
// tokens' tiles are real) leave at once, costing a launch slot each, not a tile of work.
#include <cstdint>
#include <memory>

#include "kernels/attention_fwd/attention_params.cuh"
#include "kernels/attention_fwd/flash_fwd_v1_launch.cuh"
#include "reference/attention_varlen.hpp"

namespace kwb {
namespace {

struct PackedTokens {
  std::int64_t total = 0;
};

template <class T>
void launch(const LaunchArgs& a) {
  AttentionParams p = AttentionParams::of(varlen::VarlenAxes::of(a.shape).attention);
  p.cu_seqlens = a.tensor<const std::int32_t>("cu_seqlens");
  p.total = a.state_as<PackedTokens>().total;
  flash::launch_flash_fwd_v1<T>(a, p);
}

KWB_REGISTER_VARIANT(Variant{
    .op = varlen::kOp,
    .name = "fused_v1_fa2_mma_cp_async_varlen",
    .role = Role::fused,
    .description = "attention_fwd's FlashAttention-2 kernel on packed sequences: each block offset by its "
                   "sequence's start, masked by its length, tiles past the end skipped",
    .launch = by_dtype_of<DType::fp16, DType::bf16>([]<class T>(const LaunchArgs& a) { launch<T>(a); }),
    .tunables = flash::flash_fwd_v1_tunables(),
    // The packed length, summed once per case rather than per launch.
    .prepare = [](const LaunchArgs& a) -> std::shared_ptr<void> {
      return std::make_shared<PackedTokens>(PackedTokens{varlen::VarlenAxes::of(a.shape).total()});
    },
});

}  // namespace
}  // namespace kwb
