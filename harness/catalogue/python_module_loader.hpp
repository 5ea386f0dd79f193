// Python modules of variants: `kwb run --python my_kernels.py` (or --plugin, a suite's plugins:,
// $KWB_PLUGINS; anything whose path ends in .py). A module registers Python callables as variants
// of the catalogue's ops with the decorator @kwb.variant (python/variants/variant_api.hpp); they
// run in kwb's worker like any variant: the same isolation, flush, timing, verification and
// reports. The file's path and SHA-256 are its PluginSource, exactly as a shared library's.
//
// kwb itself does not link Python. The first .py loaded opens the Python bridge (a shared library
// built beside kwb where pybind11 and Python's development files are found: python/variants/),
// which starts an interpreter in this process and imports the module. The Python module `kwb`,
// whose interpreter is already running, installs a loader of its own (set_python_module_loader).
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "harness/catalogue/registry.hpp"

namespace kwb {

// Whether `path` names a Python module (ends in .py) rather than a shared library.
bool is_python_module_path(const std::filesystem::path& path);

// Whether `registry`'s op `op` was defined by a Python file (kwb.op): its tensors, work model and
// oracle call into the interpreter.
bool op_from_python_file(const Registry& registry, std::string_view op);

// Imports the module at `path` (absolute) and adds the variants it registers to `staged`, a
// registry of their own that the caller adopts (Registry::adopt). Throws std::runtime_error with
// what went wrong (the Python traceback of an import that raised, a decorator's complaint).
using PythonModuleLoader = std::function<void(const std::string& path, Registry& staged)>;

// Replaces the loader (the Python module `kwb` imports in its own interpreter). An empty function
// restores the default: the bridge library, opened with dlopen.
void set_python_module_loader(PythonModuleLoader loader);

// The loader in use. Throws std::runtime_error when this kwb has no bridge (built without Python),
// saying how to build it.
void load_python_module(const std::string& path, Registry& staged);

// $KWB_PYTHON_BRIDGE: the bridge library to open instead of the one built or installed with kwb.
inline constexpr const char* kPythonBridgeEnv = "KWB_PYTHON_BRIDGE";
// The bridge's entry points (python/variants/bridge_entry.cpp): its ABI tag (the plugin tag: the
// bridge compiles kwb's headers as a plugin does) and the loader.
inline constexpr const char* kPythonBridgeTagSymbol = "kwb_python_bridge_abi_tag";
inline constexpr const char* kPythonBridgeLoadSymbol = "kwb_python_bridge_load";
// void(const char* path, Registry* staged, std::string* error): error left empty on success.
using PythonBridgeLoadFunction = void (*)(const char*, Registry*, std::string*);

}  // namespace kwb
