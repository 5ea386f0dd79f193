// rope_bwd fused_v1_vec16_shared_table: dq and dk in one launch, the forward's kernel with sin
// negated.
//
// The gradient of a rotation is its transpose: dx[i] = g[i]*cos + g[i+D/2]*sin and
// dx[i+D/2] = g[i+D/2]*cos - g[i]*sin, which is the forward formula with -sin. The kernel
// (kernels/rope_fwd/rope_rotate.cuh) flips the sign as it stages the sin rows in shared memory,
// so the backward moves exactly the forward's bytes (dq_out, dk_out read once, dq, dk written
// once, the tables once per token) and should reach the same ~90% of the copy ceiling in bf16,
// above the 80% target for backward kernels.
#include "harness/catalogue/registry.hpp"
#include "kernels/rope_fwd/rope_rotate.cuh"

namespace kwb {
namespace {

KWB_REGISTER_VARIANT(Variant{
    .op = "rope_bwd",
    .name = "fused_v1_vec16_shared_table",
    .role = Role::fused,
    .description = "dq and dk in one launch: the forward's kernel with sin negated as it is staged in shared",
    .launch = [](const LaunchArgs& a) { rope::launch_rotate(a, rope::kBackwardRotation); },
    .refuse = rope::refuse_rotate,
    .tunables = rope::rotate_tunables(),
});

}  // namespace
}  // namespace kwb
