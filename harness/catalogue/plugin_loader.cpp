// dlopen, the ABI tag, the plugin's registrations into a registry of their own, then adopted
// whole (see plugin_loader.hpp and plugin_abi.hpp for why in that order).
#include "harness/catalogue/plugin_loader.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "harness/catalogue/plugin_abi.hpp"
#include "harness/catalogue/plugin_hash.hpp"
#include "harness/catalogue/python_module_loader.hpp"

namespace kwb {
namespace {

// Where this kwb's package would be: the executable's prefix (<prefix>/bin/kwb), for the advice
// to rebuild a plugin against it.
std::string this_kwb_prefix() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("<the prefix kwb was installed to>") : exe.parent_path().parent_path().string();
}

std::string rebuild_advice() {
  return "rebuild the plugin against this kwb's package (cmake -DCMAKE_PREFIX_PATH=" + this_kwb_prefix() +
         ", find_package(kwb), link kwb::plugin; docs/guide.md \"Plugins\")";
}

const PluginSource* already_loaded(const Registry& registry, const std::string& path) {
  for (const PluginSource& p : registry.plugins())
    if (p.path == path) return &p;
  return nullptr;
}

// The library's handle; closed on the way out unless kept (its registered code must stay loaded).
struct LibraryHandle {
  void* handle = nullptr;
  bool keep = false;
  ~LibraryHandle() {
    if (handle && !keep) dlclose(handle);
  }
};

// 1-2. The shared library's registrations, into `staged`, once its ABI tag is this kwb's.
void register_library(const std::string& path, const std::string& quoted, Registry& staged) {
  // 1. Load it. RTLD_NOW: a kwb symbol the plugin needs and this kwb lacks (a plugin built for
  //    another kwb) fails here, with its name, instead of at a later call. RTLD_LOCAL: one plugin's
  //    symbols never stand in for another's.
  dlerror();
  LibraryHandle library{dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)};
  if (!library.handle) {
    const char* why = dlerror();
    throw PluginError(quoted + " cannot be loaded: " + (why ? why : "dlopen failed") +
                      ". It must be a shared library built as a kwb plugin; if the error names an undefined kwb "
                      "symbol, it was built for another kwb: " + rebuild_advice());
  }
  // 2. The ABI tag, read as data before any plugin function is called.
  const auto* tag = static_cast<const char*>(dlsym(library.handle, kPluginAbiTagSymbol));
  if (!tag)
    throw PluginError(quoted + " is a shared library but not a kwb plugin (it has no " +
                      std::string(kPluginAbiTagSymbol) + " symbol): link it to the kwb::plugin target of "
                      "find_package(kwb)");
  if (std::strcmp(tag, kPluginAbiTag) != 0)
    throw PluginError(quoted + " was built for " + std::string(tag) + "; this is " + kPluginAbiTag + ": " +
                      rebuild_advice());
  const auto register_all = reinterpret_cast<PluginRegisterFunction>(dlsym(library.handle, kPluginRegisterSymbol));
  if (!register_all)
    throw PluginError(quoted + " has an ABI tag but no " + std::string(kPluginRegisterSymbol) +
                      " function: link it to the kwb::plugin target, which defines both");
  // From here the plugin's code is referenced by what it registered: keep it loaded even when
  // it is refused (kwb stops then anyway).
  library.keep = true;
  register_all(&staged);
  if (staged.ops().empty() && staged.variant_names(true).empty())
    throw PluginError(quoted + " registered no op and no variant: its sources need KWB_REGISTER_OP or "
                      "KWB_REGISTER_VARIANT, and must be compiled into the library");
}

// A Python module's variants (python_module_loader.hpp), into `staged`.
void register_python_module(const std::string& path, const std::string& quoted, Registry& staged) {
  try {
    load_python_module(path, staged);
  } catch (const std::exception& e) {
    throw PluginError(quoted + ": " + e.what());
  }
  if (staged.ops().empty() && staged.variant_names(true).empty())
    throw PluginError(quoted + " registered no variant: decorate a function with @kwb.variant(op=..., name=...) "
                      "(docs/python.md \"Python variants\")");
}

}  // namespace

PluginSource load_plugin(const std::filesystem::path& given, Registry& registry, std::string_view expected_sha256) {
  const bool python = is_python_module_path(given);
  const std::string quoted = (python ? "Python module '" : "plugin '") + given.string() + "'";
  const std::string wanted = python ? "a Python file of variants (docs/python.md \"Python variants\")"
                                    : "a plugin's shared library (libNAME.so, built against kwb's package: "
                                      "docs/guide.md \"Plugins\")";
  std::error_code ec;
  if (!std::filesystem::exists(given, ec)) throw PluginError(quoted + ": no such file; pass the path of " + wanted);
  if (!std::filesystem::is_regular_file(given, ec))
    throw PluginError(quoted + ": not a regular file; pass the path of " + wanted);
  const std::string path = std::filesystem::canonical(given, ec).string();
  if (ec) throw PluginError(quoted + ": cannot resolve its path (" + ec.message() + ")");
  // Workers receive the plugins in $KWB_PLUGINS, separated by ':' as PATH is.
  if (path.find(':') != std::string::npos)
    throw PluginError(quoted + ": its path holds ':', which separates the plugins handed to kwb's workers; "
                      "move or link it to a path without ':'");
  PluginSource source{path, ""};
  try {
    source.sha256 = sha256_hex_of_file(path);
  } catch (const std::exception& e) {
    throw PluginError(quoted + ": " + e.what());
  }
  // Loaded once per registry. A file changed since (edited in a notebook's session, rebuilt under a
  // running app) cannot replace what it registered: its workers would refuse the new bytes anyway.
  if (const PluginSource* loaded = already_loaded(registry, path)) {
    if (loaded->sha256 == source.sha256) return *loaded;
    throw PluginError(quoted + " changed since this process loaded it (sha256 " + loaded->sha256 + " then, " +
                      source.sha256 + " now): its registrations cannot be replaced in place; start " +
                      (python ? "the interpreter (the notebook's kernel) or the app again" : "the app again") +
                      " to load the new one");
  }
  if (!expected_sha256.empty() && source.sha256 != expected_sha256)
    throw PluginError(quoted + " changed since the run loaded it (sha256 " + std::string(expected_sha256) +
                      " then, " + source.sha256 + " now): it was rebuilt or replaced during the run; run again "
                      "once it is built, so that every record is of one build");
  // Its registrations, into a registry of their own, then adopted whole or not at all.
  Registry staged;
  if (python)
    register_python_module(path, quoted, staged);
  else
    register_library(path, quoted, staged);
  const std::vector<std::string> problems = registry.adopt(staged, source);
  if (!problems.empty()) {
    std::string message = quoted + " was refused (" + std::to_string(problems.size()) + " problem" +
                          (problems.size() == 1 ? "" : "s") + "); " +
                          (python ? "fix the module:" : "fix the plugin and rebuild it:");
    for (const std::string& p : problems) message += "\n  " + p;
    throw PluginError(message);
  }
  return source;
}

std::vector<LoadedPlugin> loaded_plugins(const Registry& registry) {
  std::vector<LoadedPlugin> out;
  for (const PluginSource& source : registry.plugins()) {
    LoadedPlugin& p = out.emplace_back(LoadedPlugin{source, {}, {}});
    for (const auto& [op, from] : registry.plugin_ops())
      if (from == source) p.ops.push_back(op);
    for (const auto& [variant, from] : registry.plugin_variants())
      if (from == source) p.variants.push_back(variant);
  }
  return out;
}

namespace {

// The non-empty items of a ':'-separated list.
std::vector<std::string> colon_list(const char* value) {
  std::vector<std::string> items;
  const std::string list = value ? value : "";
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(':', start), list.size());
    if (end > start) items.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

}  // namespace

void load_plugins_from_environment(Registry& registry) {
  const char* value = std::getenv(kPluginsEnv);
  if (!value) return;
  const std::vector<std::string> paths = colon_list(value);
  const char* hashes_value = std::getenv(kPluginHashesEnv);
  const std::vector<std::string> hashes = colon_list(hashes_value);
  const std::string variables =
      "$" + std::string(kPluginsEnv) + (hashes_value ? " and $" + std::string(kPluginHashesEnv) : "");
  if (hashes_value && hashes.size() != paths.size())
    throw PluginError(variables + ": " + std::to_string(paths.size()) + " plugin(s) but " +
                      std::to_string(hashes.size()) + " hash(es); a run sets both for its workers (unset " +
                      kPluginHashesEnv + " to load the plugins unchecked)");
  for (std::size_t i = 0; i < paths.size(); ++i) {
    try {
      load_plugin(paths[i], registry, hashes_value ? std::string_view(hashes[i]) : std::string_view());
    } catch (const PluginError& e) {
      throw PluginError(variables + ": " + e.what());
    }
  }
}

std::vector<std::pair<std::string, std::string>> plugin_environment(const Registry& registry) {
  std::string paths, hashes;
  for (const PluginSource& p : registry.plugins()) {
    paths += (paths.empty() ? "" : ":") + p.path;
    hashes += (hashes.empty() ? "" : ":") + p.sha256;
  }
  return {{kPluginsEnv, paths}, {kPluginHashesEnv, hashes}};
}

}  // namespace kwb
