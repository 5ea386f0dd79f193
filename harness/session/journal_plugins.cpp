#include "harness/session/journal_plugins.hpp"

namespace kwb {

nlohmann::ordered_json plugins_json(const Registry& registry) {
  auto list = nlohmann::ordered_json::array();
  for (const PluginSource& p : registry.plugins()) list.push_back({{"path", p.path}, {"sha256", p.sha256}});
  return list;
}

}  // namespace kwb
