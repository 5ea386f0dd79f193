// rope_fwd fused_v3_pack_per_thread_tensor_major: fused_v2's elementwise kernel with Triton's
// mapping: one 16-byte output pack per thread (own half and partner half loaded, one pack
// stored), 128-thread blocks, every q item before every k item, tables and partner halves read
// with L1/L2 evict_last hints. kernels/rope_fwd/rope_direct.cuh has why and which parts paid;
// measured: docs/results.md.
#include "harness/catalogue/registry.hpp"
#include "kernels/rope_fwd/rope_direct.cuh"

namespace kwb {
namespace {

KWB_REGISTER_VARIANT(Variant{
    .op = "rope_fwd",
    .name = "fused_v3_pack_per_thread_tensor_major",
    .role = Role::fused,
    .description = "q then k in one elementwise launch, one 16-byte output pack per thread (own and partner "
                   "half loaded), 128-thread blocks, tables and partner halves read evict_last",
    .launch = [](const LaunchArgs& a) { rope::launch_per_pack(a, rope::kForwardRotation); },
    .refuse = rope::refuse_per_pack,
});

}  // namespace
}  // namespace kwb
