// One case as a Python variant sees it: kwb.Case, with the op's tensors as kwb.Tensor objects that
// PyTorch, CuPy and JAX take without copying (DLPack: __dlpack__ and __dlpack_device__; also
// __cuda_array_interface__ for the element types NumPy can name). The core depends on none of them.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "harness/catalogue/registry.hpp"

namespace kwb::python {

// Registers kwb.Case and kwb.Tensor in `m` (once per process: pybind11 keeps one type per class).
void define_case_classes(pybind11::module_& m);

// A shape as Python sees it: {axis: int, or the choice's name}.
pybind11::dict shape_dict(const Shape& shape);

// The case of `args` for the variant `variant` of `op`, as a kwb.Case. Its tensors point at the
// harness's buffers, which live until the case ends: a variant must not keep them beyond it.
pybind11::object make_case(const LaunchArgs& args, const std::string& op, const std::string& variant);

}  // namespace kwb::python
