// What the attention ops share in the catalogue: their axes (batch, seq, heads, kv_heads,
// head_dim, causal, window, softcap), which shapes are valid, and the edge shapes every variant
// must pass (reference/attention.cpp defines them; attention_fwd and attention_bwd register them).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/catalogue/registry.hpp"

namespace kwb {

std::vector<AxisSpec> attention_axes();
std::optional<std::string> attention_invalid(const Shape& s);
std::vector<Shape> attention_edge_shapes();

}  // namespace kwb
