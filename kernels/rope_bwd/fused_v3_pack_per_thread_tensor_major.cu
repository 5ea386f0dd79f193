// rope_bwd fused_v3_pack_per_thread_tensor_major: dq and dk by the forward's fused_v3 kernel
// with sin negated as it is read (kernels/rope_fwd/rope_direct.cuh).
#include "harness/catalogue/registry.hpp"
#include "kernels/rope_fwd/rope_direct.cuh"

namespace kwb {
namespace {

KWB_REGISTER_VARIANT(Variant{
    .op = "rope_bwd",
    .name = "fused_v3_pack_per_thread_tensor_major",
    .role = Role::fused,
    .description = "dq then dk in one elementwise launch: the forward's fused_v3 with sin negated as it is read",
    .launch = [](const LaunchArgs& a) { rope::launch_per_pack(a, rope::kBackwardRotation); },
    .refuse = rope::refuse_per_pack,
});

}  // namespace
}  // namespace kwb
