// A new op defined in Python (kwb.op, variant_api.hpp): its axes, dtypes, tensors, work model and an
// fp64 NumPy oracle, as a kwb::Op whose functions call back into the interpreter (with the GIL, from
// whichever thread the harness asks on: the planner, the worker, its oracle thread).
#pragma once

#include <pybind11/pybind11.h>

#include "harness/catalogue/registry.hpp"

namespace kwb::python {

// The op kwb.op(...) recorded in `spec` (a dict: name, description, axes, dtypes, tensors, oracle,
// work, default_shapes, edge_shapes, sample_axis, compute_unit). Throws std::runtime_error naming the
// op and what is wrong where the spec itself is malformed; the registry's checks do the rest.
Op op_of(const pybind11::dict& spec);

}  // namespace kwb::python
