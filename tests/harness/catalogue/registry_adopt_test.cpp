// Registry::adopt, how a plugin's registrations join the catalogue: whole or not at all, clashes
// naming both sources, the registry's own checks applied to the plugin's ops and variants, and
// each registration's source kept for records.
#include <gtest/gtest.h>

#include "harness/catalogue/registry.hpp"
#include "tests/plugins/test_plugin_op.hpp"
#include "tests/support/mentions.hpp"

namespace kwb {
namespace {

using kwb_test_plugin::copy_op;
using kwb_test_plugin::copy_variant;
using test::Mentions;

const PluginSource kFirst{"/plugins/libfirst.so", std::string(64, 'a')};
const PluginSource kSecond{"/plugins/libsecond.so", std::string(64, 'b')};

// A catalogue with one built-in op and variant, as kwb holds before any plugin.
Registry built_in() {
  Registry r;
  r.add(copy_op("builtin_copy"));
  r.add(copy_variant("builtin_copy", "fused_v1"));
  return r;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

TEST(RegistryAdopt, APluginsOpsAndVariantsJoinTaggedWithTheirSource) {
  Registry r = built_in();
  Registry plugin;
  plugin.add(copy_op("plugin_copy"));
  plugin.add(copy_variant("plugin_copy", "v1"));
  plugin.add(copy_variant("builtin_copy", "plugin_v2"));  // a variant of a built-in op
  ASSERT_EQ(joined(r.adopt(plugin, kFirst)), "");
  ASSERT_NE(r.find_op("plugin_copy"), nullptr);
  ASSERT_NE(r.find_variant("builtin_copy", "plugin_v2"), nullptr);
  ASSERT_NE(r.source_of_op("plugin_copy"), nullptr);
  EXPECT_EQ(*r.source_of_op("plugin_copy"), kFirst);
  EXPECT_EQ(*r.source_of_variant("builtin_copy", "plugin_v2"), kFirst);
  EXPECT_EQ(r.source_of_op("builtin_copy"), nullptr);
  EXPECT_EQ(r.source_of_variant("builtin_copy", "fused_v1"), nullptr);
  ASSERT_EQ(r.plugins().size(), 1u);
  EXPECT_EQ(r.plugins()[0], kFirst);
  EXPECT_TRUE(r.problems().empty()) << joined(r.problems());
}

TEST(RegistryAdopt, AClashNamesBothSourcesAndLeavesTheCatalogueAsItWas) {
  Registry r = built_in();
  Registry first;
  first.add(copy_op("plugin_copy"));
  ASSERT_EQ(joined(r.adopt(first, kFirst)), "");
  Registry second;
  second.add(copy_op("plugin_copy"));                     // clashes with the first plugin's op
  second.add(copy_variant("builtin_copy", "fused_v1"));   // clashes with the built-in variant
  second.add(copy_variant("builtin_copy", "fresh_name"));  // sound, but its plugin is refused whole
  const auto problems = r.adopt(second, kSecond);
  ASSERT_EQ(problems.size(), 2u) << joined(problems);
  EXPECT_TRUE(Mentions(problems[0], "op 'plugin_copy' of plugin /plugins/libsecond.so clashes with op 'plugin_copy' "
                                    "of plugin /plugins/libfirst.so"));
  EXPECT_TRUE(Mentions(problems[1], "variant 'builtin_copy:fused_v1' of plugin /plugins/libsecond.so clashes with "
                                    "variant 'builtin_copy:fused_v1' built into kwb"));
  EXPECT_TRUE(Mentions(problems[1], "rename the plugin's variant"));
  EXPECT_EQ(r.find_variant("builtin_copy", "fresh_name"), nullptr);
  EXPECT_EQ(*r.source_of_op("plugin_copy"), kFirst);
  EXPECT_EQ(r.plugins().size(), 1u);
}

TEST(RegistryAdopt, ABadVariantIsFoundByTheRegistrysOwnCheckAndRefused) {
  Registry r = built_in();
  Registry plugin;
  plugin.add(Variant{.op = "builtin_copy", .name = "no_launch"});
  plugin.add(copy_variant("nobody_registered_this", "v1"));
  plugin.add(copy_variant("builtin_copy", "twice"));
  plugin.add(copy_variant("builtin_copy", "twice"));  // a duplicate within the plugin
  const auto problems = r.adopt(plugin, kFirst);
  const std::string text = joined(problems);
  EXPECT_EQ(problems.size(), 3u) << text;
  EXPECT_TRUE(Mentions(text, "plugin /plugins/libfirst.so: variant 'builtin_copy:no_launch' has no .launch function"));
  EXPECT_TRUE(Mentions(text, "plugin /plugins/libfirst.so: variant 'nobody_registered_this:v1' names op "
                             "'nobody_registered_this', which is not registered"));
  EXPECT_TRUE(Mentions(text, "plugin /plugins/libfirst.so: variant 'builtin_copy:twice' is registered twice"));
  EXPECT_EQ(r.find_variant("builtin_copy", "no_launch"), nullptr);
  EXPECT_TRUE(r.plugins().empty());
}

}  // namespace
}  // namespace kwb
