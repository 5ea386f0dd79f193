// Loading plugins: shared libraries of ops and variants built outside this tree against kwb's
// installed package (find_package(kwb), target kwb::plugin; examples/plugin/ is one). Named by
// `kwb list|run|tune --plugin PATH`, a suite file's `plugins:` and $KWB_PLUGINS, which is also how
// a run hands its plugins to its workers (each worker is a fresh `kwb __worker` process).
// A path ending in .py is a Python module of variants (harness/catalogue/python_module_loader.hpp)
// and goes the same way: hashed, adopted whole, handed to the workers, recorded.
//
// Every way a plugin can be wrong is a PluginError before anything runs (`kwb` exits 2): a file
// that is missing or not a shared library, one built for another kwb (both ABI tags named: see
// harness/catalogue/plugin_abi.hpp), one that registers nothing, and one whose ops or variants
// are bad or clash with those already registered (both sources named). A refused plugin leaves
// the catalogue as it was (Registry::adopt).
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/catalogue/plugin_source.hpp"
#include "harness/catalogue/registry.hpp"

namespace kwb {

// What was wrong, with the plugin's path, and how to fix it.
struct PluginError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// The registrations one plugin made, for `kwb list` and the report.
struct LoadedPlugin {
  PluginSource source;
  std::vector<std::string> ops;       // op names
  std::vector<std::string> variants;  // "op:variant"
};

// Loads the plugin at `path` into `registry`; a file already loaded into it (the same absolute
// path) is not loaded again. Returns its source (absolute path, SHA-256). Throws PluginError, also
// when `expected_sha256` is given and the file's bytes are not those (checked before it is loaded).
PluginSource load_plugin(const std::filesystem::path& path, Registry& registry = Registry::instance(),
                         std::string_view expected_sha256 = {});

// Each plugin whose registrations `registry` holds, in load order.
std::vector<LoadedPlugin> loaded_plugins(const Registry& registry = Registry::instance());

// $KWB_PLUGINS: plugin paths separated by ':' (as PATH is).
inline constexpr const char* kPluginsEnv = "KWB_PLUGINS";

// $KWB_PLUGINS_SHA256: the SHA-256 of each plugin of $KWB_PLUGINS, in its order, separated by ':'.
// A run sets it for its workers, so that a worker (a restarted one too) refuses a plugin rebuilt
// or replaced since the run loaded it: every record must be of the code its hash names.
inline constexpr const char* kPluginHashesEnv = "KWB_PLUGINS_SHA256";

// Loads every plugin $KWB_PLUGINS names (nothing when unset or empty), each checked against its
// hash in $KWB_PLUGINS_SHA256 where that is set. Throws PluginError, its message starting with
// the variable's name.
void load_plugins_from_environment(Registry& registry = Registry::instance());

// The variables that make a worker load exactly the plugins `registry` holds, the very same files
// (empty values: none).
std::vector<std::pair<std::string, std::string>> plugin_environment(const Registry& registry = Registry::instance());

}  // namespace kwb
