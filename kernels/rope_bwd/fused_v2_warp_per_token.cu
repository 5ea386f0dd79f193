// rope_bwd fused_v2_warp_per_token: dq and dk in one launch, the forward's warp-per-token
// kernel with sin negated (the transposed rotation, as fused_v1_vec16_shared_table does it).
//
// Each lane negates its sin values once per token in registers, so the backward moves exactly
// the forward's bytes with the same access pattern (kernels/rope_fwd/rope_rotate_v2.cuh) and
// should reach the forward's >= 92% of the copy ceiling in bf16, above the 80% backward target
// and above v1 at short kernels (~50 us) and small heads.
#include "catalogue/registry.hpp"
#include "kernels/rope_fwd/rope_rotate_v2.cuh"

namespace kwb {
namespace {

KWB_REGISTER_VARIANT(Variant{
    .op = "rope_bwd",
    .name = "fused_v2_warp_per_token",
    .role = Role::fused,
    .description = "dq and dk in one launch: the forward's warp-per-token kernel with sin negated in registers",
    .launch = [](const LaunchArgs& a) { rope::launch_rotate_warp(a, -1.0f); },
    .refuse = rope::refuse_rotate_warp,
    .workspace_bytes = {},
    .tunables = rope::warp_rotate_tunables(),
});

}  // namespace
}  // namespace kwb
