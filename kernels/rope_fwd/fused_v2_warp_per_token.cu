// rope_fwd fused_v2_warp_per_token: q and k rotated in one launch, one warp per token, the
// token's cos and sin straight into registers (no shared memory, no barrier), a grid-stride
// grid of resident warps.
//
// Built to beat fused_v1_vec16_shared_table on short kernels (~50 us at the torch.compile
// peer's element count, where v1 reaches 87.5% of the copy ceiling and loses to torch.compile
// by 2%): no per-block table staging or barrier, no item division, a one-token (~10 KB) tail
// per warp. kernels/rope_fwd/rope_rotate_v2.cuh has the layout, the napkin math and the
// tunables. Expected: >= 92% of the copy ceiling at the default bf16 shapes, under 49 us at
// 1x4096x32x32x128 (torch.compile: 50.5 us for the same elements of q alone).
#include "catalogue/registry.hpp"
#include "kernels/rope_fwd/rope_rotate_v2.cuh"

namespace kwb {
namespace {

KWB_REGISTER_VARIANT(Variant{
    .op = "rope_fwd",
    .name = "fused_v2_warp_per_token",
    .role = Role::fused,
    .description = "q and k in one launch: a warp per token, cos/sin in registers, 16-byte loads of both halves, grid-stride",
    .launch = [](const LaunchArgs& a) { rope::launch_rotate_warp(a, 1.0f); },
    .refuse = rope::refuse_rotate_warp,
    .workspace_bytes = {},
    .tunables = rope::warp_rotate_tunables(),
});

}  // namespace
}  // namespace kwb
