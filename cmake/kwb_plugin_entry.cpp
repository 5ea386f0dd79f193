// The two symbols kwb reads from a plugin (harness/catalogue/plugin_abi.hpp): compiled into every
// library that links the kwb::plugin CMake target, so a plugin's own sources hold only its
// kernels and registrations. Installed as <prefix>/share/kwb/kwb_plugin_entry.cpp.
#include "harness/catalogue/plugin_abi.hpp"
#include "harness/catalogue/registry.hpp"

#ifndef KWB_BUILDING_PLUGIN
#error "kwb_plugin_entry.cpp belongs to a plugin: link the kwb::plugin target, which defines KWB_BUILDING_PLUGIN"
#endif

// Data, not a function: the loader reads it before any of the plugin's code runs.
extern "C" __attribute__((visibility("default"))) const char kwb_plugin_abi_tag[] = KWB_PLUGIN_ABI_TAG;

// Called after the tag matched, once per registry that loads the plugin: every registration the
// plugin's static initialisers queued. The queue is kept, so that a second registry in the same
// process (a test's, a tool's own) gets them all too.
extern "C" __attribute__((visibility("default"))) void kwb_plugin_register(kwb::Registry* registry) {
  for (const auto& add : kwb::detail::pending_plugin_registrations()) add(*registry);
}
