// The plugins a run loaded, as its journal's header keeps them (plan_flags), so that `kwb run
// --resume` loads the very same files again. Written by every way a run starts (the CLI, the Python
// module).
#pragma once

#include <nlohmann/json.hpp>

#include "harness/catalogue/registry.hpp"

namespace kwb {

// The key of the journal header's plan_flags: [{"path": ..., "sha256": ...}, ...] in load order.
inline constexpr const char* kJournalPluginsKey = "plugins";

// Every plugin (shared library or Python module) `registry` holds, in that form.
nlohmann::ordered_json plugins_json(const Registry& registry);

}  // namespace kwb
