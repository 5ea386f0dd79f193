// swiglu_bwd fused_v2_flat_vec16_stream_hints: v1 with cache hints for data touched once.
//
// Same kernel, grid and math as fused_v1_flat_vec16; only the accesses change
// (StreamingHintAccess in kernels/common/streaming_map.cuh): loads that skip L1 and ask L2 for
// the whole 256-byte line, evict-first stores. With 3 read and 2 write streams interleaved, the
// larger L2 requests may keep DRAM pages busier than v1's. Expected: within +-2% of v1
// (>= 90% of copy); kept beside v1 so the two are measured in the same run.
#include "kernels/swiglu_fwd/swiglu_streaming.cuh"

namespace kwb {
namespace {

KWB_REGISTER_VARIANT(swiglu_streaming_variant<StreamingHintAccess, SwigluBackwardMath>(
    "swiglu_bwd", "fused_v2_flat_vec16_stream_hints",
    "v1 + no-L1 loads with 256-byte L2 prefetch and evict-first stores (data touched once)"));

}  // namespace
}  // namespace kwb
