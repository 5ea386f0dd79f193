// rope_bwd fused_v2_vec16_direct_table: dq and dk in one elementwise launch, the forward's
// fused_v2 kernel with sin negated as it is read (kernels/rope_fwd/rope_direct.cuh).
#include "harness/catalogue/registry.hpp"
#include "kernels/rope_fwd/rope_direct.cuh"

namespace kwb {
namespace {

KWB_REGISTER_VARIANT(Variant{
    .op = "rope_bwd",
    .name = "fused_v2_vec16_direct_table",
    .role = Role::fused,
    .description = "dq and dk in one elementwise launch: the forward's fused_v2 with sin negated as it is read",
    .launch = [](const LaunchArgs& a) { rope::launch_direct(a, rope::kBackwardRotation); },
    .refuse = rope::refuse_direct,
    .tunables = rope::direct_tunables(),
});

}  // namespace
}  // namespace kwb
