// paged_attention_decode's derived input: each sequence's context length, written on the device
// from the shape's formula (paged_decode::context_length, reference/paged_attention_decode.hpp),
// so that the kernels and the oracle read the lengths as a tensor while the work model counts
// exactly the keys they hold.
#pragma once

#include "harness/catalogue/registry.hpp"

namespace kwb::ref {

// Writes `context_lens` of paged_attention_decode's tensors on args.stream.
void paged_decode_derive_lengths(const LaunchArgs& args);

}  // namespace kwb::ref
