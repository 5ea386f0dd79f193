// block_sparse_attention_fwd's derived input: the block mask, written on the device from the
// shape's formula (block_sparse::block_kept, reference/block_sparse_attention.hpp), so that the
// kernels and the oracle read it as a tensor while the work model counts exactly the pairs it keeps.
#pragma once

#include "harness/catalogue/registry.hpp"

namespace kwb::ref {

// Writes `block_mask` of block_sparse_attention_fwd's tensors on args.stream.
void block_sparse_derive_mask(const LaunchArgs& args);

}  // namespace kwb::ref
