// What a Python module of variants sees as `kwb` (docs/python.md "Python variants"):
//
//   import kwb
//
//   @kwb.variant(op="rmsnorm_fwd", name="triton_rmsnorm", uses=["Triton"], requires=["torch", "triton"])
//   def triton_rmsnorm(case):            # once per case, in prepare, outside timing
//       x = torch.from_dlpack(case["x"])  # the case's device tensors, by the op's names
//       ...
//       def launch(stream):               # each launch: verification, warm-up, every sample
//           ...                           # enqueue the work on `stream` (a cudaStream_t as int)
//       return launch
//
// The decorator records the variant in the module's list (registered_variants()); the importer
// (variant_import.hpp) turns each into a kwb::Variant. The same definitions serve the Python module
// `kwb` (python/kwb_module.cpp) and the module the bridge gives an embedded interpreter
// (bridge_entry.cpp), so a file of variants imports the same way in both.
#pragma once

#include <pybind11/pybind11.h>

namespace kwb::python {

// Adds variant(), op(), tensor(), registered_variants() and the classes Case and Tensor to `m`.
void define_variant_api(pybind11::module_& m);

// The attribute of the `kwb` module that holds the registrations, a list of dicts in decoration
// order: op, name, role, description, uses, math, tunables, requires, refuse, test_only,
// varies_run_to_run, factory.
inline constexpr const char* kRegisteredVariantsAttr = "_registered_variants";
// Likewise the ops kwb.op(...) registered (python/variants/op_import.hpp reads them).
inline constexpr const char* kRegisteredOpsAttr = "_registered_ops";

}  // namespace kwb::python
