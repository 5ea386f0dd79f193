// What block_sparse_attention_fwd's variants hand the attention kernels: attention_fwd's params for
// the case's axes (no window) with the block mask and its geometry set.
#pragma once

#include <cstdint>

#include "harness/catalogue/registry.hpp"
#include "kernels/attention_fwd/attention_params.cuh"
#include "reference/block_sparse_attention.hpp"

namespace kwb {
namespace block_sparse {

inline AttentionParams params_of(const LaunchArgs& a) {
  const auto s = BlockSparseAxes::of(a.shape);
  AttentionParams p = AttentionParams::of(s.attention);
  p.block_mask = a.tensor<const std::uint8_t>("block_mask");
  p.block = s.block;
  p.blocks = s.blocks();
  return p;
}

}  // namespace block_sparse
}  // namespace kwb
