#include "harness/plan/suite_plugins.hpp"

#include "harness/catalogue/plugin_loader.hpp"
#include "harness/plan/suite_file.hpp"

namespace kwb {

void load_suite_plugins(const std::string& suite_path, Registry& registry) {
  if (suite_path.empty()) return;
  SuiteFile suite;
  try {
    suite = load_suite(suite_path);
  } catch (const SuiteError&) {
    return;  // the planner reads it again and reports where it is wrong
  }
  for (const auto& plugin : suite.plugins) {
    try {
      load_plugin(plugin.value, registry);
    } catch (const PluginError& e) {
      throw SuiteError(suite.path, plugin.at, e.what());
    }
  }
}

}  // namespace kwb
