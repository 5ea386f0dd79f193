// The --plugin flag and a suite's plugins, loaded before anything is planned (plugin_flags.hpp).
#include "cli/plugin_flags.hpp"

#include <iostream>

#include "harness/catalogue/plugin_loader.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/plan/suite_file.hpp"
#include "harness/plan/suite_plugins.hpp"
#include "harness/session/journal_plugins.hpp"

namespace kwb::cli {

void add_plugin_option(CLI::App* cmd, std::vector<std::string>& paths) {
  // --python is the same option under the name a Python user looks for: a path ending in .py is a
  // Python module of variants whichever name brought it.
  cmd->add_option("--plugin,--python", paths,
                  "Load the ops and variants of a plugin (a shared library built against kwb's package: "
                  "docs/guide.md \"Plugins\") or the variants of a Python file (FILE.py: docs/python.md "
                  "\"Python variants\"); repeatable")
      ->type_name("PATH");
}

bool load_plugin_flags(const std::string& verb, const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    try {
      load_plugin(path);
    } catch (const PluginError& e) {
      std::cerr << verb << ": --plugin: " << e.what() << "\n";
      return false;
    }
  }
  return true;
}

bool load_suite_plugins(const std::string& verb, const std::string& suite_path) {
  try {
    kwb::load_suite_plugins(suite_path);
  } catch (const SuiteError& e) {
    std::cerr << verb << ": " << e.what() << "\n";
    return false;
  }
  return true;
}

void load_journal_plugins(const nlohmann::ordered_json& plan_flags) {
  const auto it = plan_flags.find(kJournalPluginsKey);
  if (it == plan_flags.end()) return;
  if (!it->is_array()) throw PluginError("the journal's header: plan_flags.plugins is not a list");
  for (const auto& entry : *it) {
    if (!entry.is_object() || !entry.contains("path") || !entry.contains("sha256") || !entry["path"].is_string() ||
        !entry["sha256"].is_string())
      throw PluginError("the journal's header: plan_flags.plugins holds an entry without a path and a sha256");
    const std::string path = entry["path"].get<std::string>(), sha = entry["sha256"].get<std::string>();
    // Loaded already (by --plugin): the same file must still be the one the run recorded.
    const std::string advice = ": resume with the build the run began with, or start a new run";
    PluginSource source;
    try {
      source = load_plugin(path, Registry::instance(), sha);
    } catch (const PluginError& e) {
      throw PluginError("the journal's plugin: " + std::string(e.what()) + advice);
    }
    if (source.sha256 != sha)
      throw PluginError("plugin '" + path + "' changed since the run loaded it (sha256 " + sha + " then, " +
                        source.sha256 + " now)" + advice);
  }
}

}  // namespace kwb::cli
