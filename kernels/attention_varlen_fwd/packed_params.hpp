// The kernel params of a packed-sequence case, as attention_varlen_fwd's and attention_varlen_bwd's
// wgmma variants take them: the shared attention axes (seq: the longest sequence), the case's
// cu_seqlens and its packed token count.
#pragma once

#include <cstdint>

#include "harness/catalogue/registry.hpp"
#include "kernels/attention_fwd/attention_params.cuh"
#include "reference/attention_varlen.hpp"

namespace kwb {
namespace varlen {

inline AttentionParams packed_params(const LaunchArgs& a) {
  const auto v = VarlenAxes::of(a.shape);
  AttentionParams p = AttentionParams::of(v.attention);
  p.cu_seqlens = a.tensor<const std::int32_t>("cu_seqlens");
  p.total = v.total();
  return p;
}

}  // namespace varlen
}  // namespace kwb
