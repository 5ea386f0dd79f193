// Importing a file of Python variants into a registry, in an interpreter that is already running
// (the Python module's, or the one the bridge starts in kwb). Each @kwb.variant the import runs
// becomes a kwb::Variant whose prepare() calls the decorated function with the case and keeps the
// launcher it returns, and whose launch() calls that launcher with the stream. A Python exception
// becomes a std::runtime_error carrying the whole traceback, so a variant that raises fails its own
// case with the traceback in the record.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "harness/catalogue/registry.hpp"

namespace kwb::python {

// Imports the module at `path` (absolute) and adds its variants to `staged`. Takes the GIL. Throws
// std::runtime_error: the import raised (with its traceback), or `kwb` is not importable.
void import_python_variants(const std::string& path, Registry& staged);

// The text of the Python exception now set, with its traceback, as `python -c` prints it.
// Needs the GIL.
std::string python_error_text(pybind11::error_already_set& error);

}  // namespace kwb::python
