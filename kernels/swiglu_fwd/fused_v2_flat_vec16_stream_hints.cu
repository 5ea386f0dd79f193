// swiglu_fwd fused_v2_flat_vec16_stream_hints: v1 with cache hints for data touched once.
//
// Same kernel, grid and math as fused_v1_flat_vec16; only the accesses change
// (StreamingHintAccess in kernels/common/streaming_map.cuh):
//   - loads are ld.global.nc.L1::no_allocate.L2::256B: read-only path, no L1 allocation, and
//     a request that L2 fetch the whole 256-byte line (two 128-byte DRAM bursts) at once;
//   - stores are st.global.cs (evict-first), so written lines leave L2 first.
// Why it might help: fewer, larger DRAM requests per byte and an L2 that does not hold lines no
// one reads again. Why it might not: v1's warps already read whole 512-byte spans per load
// instruction, so L2 sees full lines anyway. Expected: within +-1% of v1 (>= 95% of copy);
// kept beside v1 so the two are measured in the same run.
#include "kernels/swiglu_fwd/swiglu_streaming.cuh"

namespace kwb {
namespace {

KWB_REGISTER_VARIANT(swiglu_streaming_variant<StreamingHintAccess, SwigluForwardMath>(
    "swiglu_fwd", "fused_v2_flat_vec16_stream_hints",
    "v1 + no-L1 loads with 256-byte L2 prefetch and evict-first stores (data touched once)"));

}  // namespace
}  // namespace kwb
