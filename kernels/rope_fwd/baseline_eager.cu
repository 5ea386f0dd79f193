// rope_fwd baseline_eager_16_launches: rotate-half RoPE as eager PyTorch runs it, op by op.
//
// kernels/rope_fwd/rope_eager_chain.cuh has the PyTorch lines: cat the half-width tables to
// full width (2 launches), then per tensor cast to fp32, neg, cat, mul, mul, add, cast back
// (7 launches each for q and k): 16 launches in bf16/fp16, 12 in fp32, two more
// (index gathers of the tables) with position ids. Every launch is a full pass over its tensor
// with fp32 intermediates: per element of q and k in bf16, cast 2+4, neg 2+2 (half the
// elements, counted per element), cat 4+4, two muls 4+4 each (tables from L2), add 8+4, cast 4+2:
// 52 bytes against the fused kernel's 4, so expect ~10x, minus what the launch gaps add.
#include "harness/catalogue/registry.hpp"
#include "kernels/rope_fwd/rope_eager_chain.cuh"

namespace kwb {
namespace {

KWB_REGISTER_VARIANT(Variant{
    .op = "rope_fwd",
    .name = "baseline_eager_16_launches",
    .role = Role::baseline,
    .description = "op by op as eager PyTorch: cat tables, then per tensor cast, neg, cat, mul, mul, add, cast "
                   "(+2 gathers with ids)",
    .launch = [](const LaunchArgs& a) { rope::launch_eager_chain(a, false); },
    .refuse = {},
    .workspace_bytes = rope::eager_chain_workspace_bytes,
});

}  // namespace
}  // namespace kwb
