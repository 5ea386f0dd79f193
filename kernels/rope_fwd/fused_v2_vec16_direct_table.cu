// rope_fwd fused_v2_vec16_direct_table: q and k rotated in one elementwise launch, each thread's
// cos and sin lanes read from the tables through L1 (no shared-memory staging, no barrier).
// kernels/rope_fwd/rope_direct.cuh has the design, why it could beat fused_v1 and what it should
// reach.
#include "harness/catalogue/registry.hpp"
#include "kernels/rope_fwd/rope_direct.cuh"

namespace kwb {
namespace {

KWB_REGISTER_VARIANT(Variant{
    .op = "rope_fwd",
    .name = "fused_v2_vec16_direct_table",
    .role = Role::fused,
    .description = "q and k in one elementwise launch, 16-byte loads of both halves, cos/sin lanes read "
                   "through L1, every load of a thread issued before its first multiply",
    .launch = [](const LaunchArgs& a) { rope::launch_direct(a, rope::kForwardRotation); },
    .refuse = rope::refuse_direct,
    .tunables = rope::direct_tunables(),
});

}  // namespace
}  // namespace kwb
