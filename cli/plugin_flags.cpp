// The --plugin flag and a suite's plugins, loaded before anything is planned (plugin_flags.hpp).
#include "cli/plugin_flags.hpp"

#include <iostream>

#include "harness/catalogue/plugin_loader.hpp"
#include "harness/plan/suite_file.hpp"

namespace kwb::cli {

void add_plugin_option(CLI::App* cmd, std::vector<std::string>& paths) {
  cmd->add_option("--plugin", paths,
                  "Load the ops and variants of a plugin (a shared library built against kwb's package: "
                  "docs/guide.md \"Plugins\"); repeatable")
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
  SuiteFile suite;
  try {
    suite = load_suite(suite_path);
  } catch (const SuiteError&) {
    return true;  // the planner reads it again and reports where it is wrong
  }
  for (const auto& plugin : suite.plugins) {
    try {
      load_plugin(plugin.value);
    } catch (const PluginError& e) {
      std::cerr << verb << ": " << SuiteError(suite.path, plugin.at, e.what()).what() << "\n";
      return false;
    }
  }
  return true;
}

}  // namespace kwb::cli
