// What attention_varlen_bwd's fused variants share on the host: their workspace (flash_bwd_passes.cuh's,
// over the packed query rows) and the limits every flash backward has, the packed tokens in place of b * s.
#pragma once

#include <optional>
#include <string>

#include "harness/catalogue/registry.hpp"
#include "kernels/attention_bwd/flash_bwd_passes.cuh"
#include "reference/attention_varlen.hpp"

namespace kwb {
namespace varlen {

inline flash::BwdWorkspace packed_bwd_workspace(const Shape& s) {
  const auto v = VarlenAxes::of(s);
  return flash::BwdWorkspace::of_rows(v.total() * v.attention.heads, v.attention.head_dim);
}

inline std::optional<std::string> refuse_packed_bwd(const Shape& s) {
  const auto v = VarlenAxes::of(s);
  return flash::refuse_flash_bwd(v.attention, v.total() * v.attention.heads);
}

}  // namespace varlen
}  // namespace kwb
