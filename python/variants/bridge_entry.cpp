// The Python bridge: a shared library kwb opens when it first loads a Python module of variants
// (harness/catalogue/python_module_loader.hpp), so that kwb itself never links Python. It starts an
// interpreter in the process, gives it a module `kwb` with the variant API (variant_api.hpp), and
// imports the file.
//
// Which Python: $KWB_PYTHON, else the one kwb was configured with (Python3_EXECUTABLE). The
// interpreter starts as if that executable ran, so a virtual environment's packages (torch, triton)
// are on its path. It must be of the version the bridge was built for (its libpython).
#include <Python.h>
#include <pybind11/pybind11.h>

#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>

#include "harness/catalogue/plugin_abi.hpp"
#include "harness/catalogue/registry.hpp"
#include "python/variants/variant_api.hpp"
#include "python/variants/variant_import.hpp"

namespace py = pybind11;

namespace {

std::string python_executable() {
  if (const char* env = std::getenv("KWB_PYTHON"); env && *env) return env;
  return KWB_PYTHON_EXECUTABLE;
}

std::string status_text(const PyStatus& status) {
  std::string text = status.err_msg ? status.err_msg : "unknown error";
  if (status.func) text = std::string(status.func) + ": " + text;
  return text;
}

// Once per process. Python's own signal handlers stay off: kwb's handle Ctrl-C. The GIL is let go
// at the end; every call into Python takes it.
void start_interpreter() {
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] {
    const std::string executable = python_executable();
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0;
    config.parse_argv = 0;
    PyStatus status = PyConfig_SetBytesString(&config, &config.program_name, executable.c_str());
    if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status)) {
      failure = "the embedded Python (as " + executable + ", Python " PY_VERSION " libraries) did not start: " +
                status_text(status) + "; set $KWB_PYTHON to a python" + std::to_string(PY_MAJOR_VERSION) + "." +
                std::to_string(PY_MINOR_VERSION) + " executable";
      return;
    }
    try {
      // The module `kwb` a file of variants imports: the variant API alone (the catalogue and the
      // runs belong to kwb here).
      py::module_ kwb = py::reinterpret_borrow<py::module_>(PyImport_AddModule("kwb"));
      kwb.attr("__doc__") = "Kernel Workbench, as kwb's embedded interpreter gives it to a file of variants";
      kwb::python::define_variant_api(kwb);
    } catch (const std::exception& e) {
      failure = std::string("the embedded Python started, but kwb's module could not be made in it: ") + e.what();
    }
    PyEval_SaveThread();  // in every case: the interpreter stays up, and this thread must not keep its lock
  });
  if (!failure.empty()) throw std::runtime_error(failure);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const char kwb_python_bridge_abi_tag[] = KWB_PLUGIN_ABI_TAG;

// python_module_loader.hpp's PythonBridgeLoadFunction.
extern "C" __attribute__((visibility("default"))) void kwb_python_bridge_load(const char* path, kwb::Registry* staged,
                                                                             std::string* error) {
  try {
    start_interpreter();
    kwb::python::import_python_variants(path, *staged);
  } catch (const std::exception& e) {
    *error = e.what();
  }
}
