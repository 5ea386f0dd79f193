// The default loader opens the Python bridge library (python/variants/bridge_entry.cpp) once.
#include "harness/catalogue/python_module_loader.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "harness/catalogue/plugin_abi.hpp"

#ifndef KWB_PYTHON_BRIDGE_BUILD_PATH
#define KWB_PYTHON_BRIDGE_BUILD_PATH ""
#endif
#ifndef KWB_PYTHON_BRIDGE_INSTALL_DIR
#define KWB_PYTHON_BRIDGE_INSTALL_DIR "lib/kwb"
#endif

namespace kwb {
namespace {

constexpr const char* kBridgeFile = "libkwb_python_bridge.so";

PythonModuleLoader& custom_loader() {
  static PythonModuleLoader loader;
  return loader;
}

// Where the bridge may be, in order: $KWB_PYTHON_BRIDGE, beside an installed kwb
// (<prefix>/bin/kwb -> <prefix>/lib/kwb/, the libdir the build was configured with), and where
// this build put it.
std::vector<std::filesystem::path> bridge_candidates() {
  std::vector<std::filesystem::path> paths;
  if (const char* env = std::getenv(kPythonBridgeEnv); env && *env) return {env};
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) paths.push_back(exe.parent_path().parent_path() / KWB_PYTHON_BRIDGE_INSTALL_DIR / kBridgeFile);
  if (*KWB_PYTHON_BRIDGE_BUILD_PATH) paths.emplace_back(KWB_PYTHON_BRIDGE_BUILD_PATH);
  return paths;
}

std::string not_built_advice() {
  return "this kwb cannot load Python modules: its Python bridge (" + std::string(kBridgeFile) +
         ") was not built. Build kwb where pybind11, Python's development files and DLPack's header are found "
         "(apt-get install pybind11-dev python3-dev libdlpack-dev; -DKWB_BUILD_PYTHON=ON makes it required), "
         "or name a bridge with $" + kPythonBridgeEnv;
}

// Opened once, RTLD_GLOBAL: the interpreter's symbols must be visible to the extension modules a
// user's module imports (torch, triton), which do not link libpython themselves.
PythonBridgeLoadFunction open_bridge() {
  static std::once_flag once;
  static PythonBridgeLoadFunction load = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    std::string tried;
    for (const auto& path : bridge_candidates()) {
      std::error_code ec;
      if (!std::filesystem::exists(path, ec)) {
        tried += (tried.empty() ? "" : ", ") + path.string();
        continue;
      }
      dlerror();
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
      if (!handle) {
        const char* why = dlerror();
        failure = "the Python bridge " + path.string() + " cannot be loaded: " + (why ? why : "dlopen failed") +
                  " (is the Python it was built for, and its libpython, still installed?)";
        return;
      }
      const auto* tag = static_cast<const char*>(dlsym(handle, kPythonBridgeTagSymbol));
      if (!tag || std::strcmp(tag, kPluginAbiTag) != 0) {
        failure = "the Python bridge " + path.string() + " belongs to another kwb (" +
                  (tag ? std::string(tag) : std::string("no ABI tag")) + "; this is " + kPluginAbiTag +
                  "): install kwb and its bridge together";
        return;
      }
      load = reinterpret_cast<PythonBridgeLoadFunction>(dlsym(handle, kPythonBridgeLoadSymbol));
      if (!load) failure = "the Python bridge " + path.string() + " has no " + kPythonBridgeLoadSymbol;
      return;
    }
    failure = not_built_advice() + (tried.empty() ? "" : " (looked for " + tried + ")");
  });
  if (!load) throw std::runtime_error(failure);
  return load;
}

}  // namespace

bool is_python_module_path(const std::filesystem::path& path) { return path.extension() == ".py"; }

bool op_from_python_file(const Registry& registry, std::string_view op) {
  const PluginSource* from = registry.source_of_op(op);
  return from && is_python_module_path(from->path);
}

void set_python_module_loader(PythonModuleLoader loader) { custom_loader() = std::move(loader); }

void load_python_module(const std::string& path, Registry& staged) {
  if (custom_loader()) return custom_loader()(path, staged);
  const PythonBridgeLoadFunction load = open_bridge();
  std::string error;
  load(path.c_str(), &staged, &error);
  if (!error.empty()) throw std::runtime_error(error);
}

}  // namespace kwb
