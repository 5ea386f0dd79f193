// squared_relu_fwd: y = max(x, 0)^2, element by element over a [rows, cols] tensor (the
// activation of Primer and of the modded-nanoGPT MLP). What its op file and kernels share.
#pragma once

#include <vector>

#include "harness/catalogue/registry.hpp"

namespace kwb_example {

std::vector<kwb::TensorSpec> squared_relu_tensors(const kwb::Shape& s, kwb::DType dtype);

}  // namespace kwb_example
