// attention_varlen_fwd's derived input: cu_seqlens, the packed sequences' offsets, written on the
// device from the shape's length formula (varlen::sequence_length), so that the kernels and the
// oracle read them as a tensor while the work model counts exactly the pairs they hold.
#pragma once

#include "harness/catalogue/registry.hpp"

namespace kwb::ref {

// Writes `cu_seqlens` of attention_varlen_fwd's tensors on args.stream.
void attention_varlen_derive_offsets(const LaunchArgs& args);

}  // namespace kwb::ref
