// A Python object that a registry's functions keep for the life of the process (the decorated
// function, a refuse(), an op's oracle). The registry that holds them is never destroyed before the
// interpreter is finalised (or never at all), and a reference dropped after finalisation would crash
// at exit: so the reference is never dropped.
#pragma once

#include <pybind11/pybind11.h>

namespace kwb::python {

struct KeptObject {
  PyObject* object;
  explicit KeptObject(const pybind11::object& o) : object(o.inc_ref().ptr()) {}
  pybind11::object get() const { return pybind11::reinterpret_borrow<pybind11::object>(object); }
};

}  // namespace kwb::python
