// The contract between kwb and a plugin (a shared library of ops and variants built outside this
// tree against kwb's installed package; harness/catalogue/plugin_loader.hpp loads it).
//
// A plugin exports two C symbols, defined for it by cmake/kwb_plugin_entry.cpp, which the kwb::plugin
// CMake target compiles into every library that links it:
//   kwb_plugin_abi_tag     const char[]: the tag below, as the plugin was compiled
//   kwb_plugin_register    void(kwb::Registry*): hands the plugin's registrations to a registry
// The loader reads the tag first (a plain read of data, no plugin code runs) and calls the entry
// only when the tag is its own. Until then the plugin's registrations wait in its own list
// (registry.hpp, KWB_BUILDING_PLUGIN), so a plugin built for another kwb never passes an object of
// another layout to kwb's code.
//
// Why a tag and an entry point, with kwb's symbols exported (the kwb executable is linked with
// ENABLE_EXPORTS): a kernel file calls kwb's own functions (the registry, tolerance and host
// tensor helpers), which the plugin resolves against the executable when it is loaded, so a
// plugin is built exactly as a kernel file in kernels/ is. What must agree for that to be sound
// is in the tag: kwb's version, the hash of the headers a plugin compiles against (the layout of
// Op, Variant, LaunchArgs...), and the C++ compiler and standard library (std::function and
// std::string cross the boundary).
#pragma once

#include "harness/catalogue/plugin_api_version.hpp"  // generated: KWB_PLUGIN_KWB_VERSION, _API_HASH

#define KWB_PLUGIN_STRING_INNER(x) #x
#define KWB_PLUGIN_STRING(x) KWB_PLUGIN_STRING_INNER(x)

#if defined(__clang__)
#define KWB_PLUGIN_COMPILER "clang " KWB_PLUGIN_STRING(__clang_major__)
#elif defined(__GNUC__)
#define KWB_PLUGIN_COMPILER "gcc " KWB_PLUGIN_STRING(__GNUC__)
#else
#define KWB_PLUGIN_COMPILER "unknown compiler"
#endif

// The standard library's ABI: libstdc++'s release and its std::string ABI, or libc++'s version.
// <cstddef> defines the macros that tell which library this is.
#include <cstddef>
#if defined(_GLIBCXX_RELEASE)
#define KWB_PLUGIN_STDLIB \
  "libstdc++ " KWB_PLUGIN_STRING(_GLIBCXX_RELEASE) " cxx11-abi " KWB_PLUGIN_STRING(_GLIBCXX_USE_CXX11_ABI)
#elif defined(_LIBCPP_VERSION)
#define KWB_PLUGIN_STDLIB "libc++ " KWB_PLUGIN_STRING(_LIBCPP_VERSION)
#else
#define KWB_PLUGIN_STDLIB "unknown standard library"
#endif

// "kwb 0.1.0, api 1f3a..., gcc 12, libstdc++ 12 cxx11-abi 1": the loader compares it whole, and
// names both tags when they differ.
#define KWB_PLUGIN_ABI_TAG \
  "kwb " KWB_PLUGIN_KWB_VERSION ", api " KWB_PLUGIN_API_HASH ", " KWB_PLUGIN_COMPILER ", " KWB_PLUGIN_STDLIB

namespace kwb {

class Registry;

inline constexpr const char* kPluginAbiTag = KWB_PLUGIN_ABI_TAG;
inline constexpr const char* kPluginAbiTagSymbol = "kwb_plugin_abi_tag";
inline constexpr const char* kPluginRegisterSymbol = "kwb_plugin_register";
using PluginRegisterFunction = void (*)(Registry*);

}  // namespace kwb
