// The one name of a case, "op:variant:dtype:shape[:tunables]", used by the record, the NVTX range,
// the journal (through the record) and the repro command's sanity check. Nothing else may build
// it, so that two places never disagree on what "the same case" means.
#pragma once

#include <string>
#include <string_view>

#include "harness/catalogue/types.hpp"

namespace kwb {

// "rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096" or, with choices and tunables,
// "attn_test:tiled:fp16:2x128x4x32,layout=bshd,causal=1:block=256". No '/' (Nsight Compute's
// --nvtx-include reads it as nesting) and no spaces.
std::string case_identity(std::string_view op, std::string_view variant, DType dtype,
                          const Shape& shape, const TunableValues& tunables);

}  // namespace kwb
