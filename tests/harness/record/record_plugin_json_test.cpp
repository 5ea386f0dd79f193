// A record's plugin (path and SHA-256) through the one codec, and its absence: records of the
// built-in catalogue and of reports written before plugins existed read back without one.
#include <gtest/gtest.h>

#include "harness/record/record_json.hpp"

namespace kwb {
namespace {

CaseRecord plugin_record() {
  CaseRecord c;
  c.op = "squared_relu_fwd";
  c.variant = "fused_v1_grid_stride";
  c.shape = Shape{{{"rows", 8}, {"cols", 16}}};
  c.disposition = Disposition::passed;
  c.nvtx_range = "squared_relu_fwd:fused_v1_grid_stride:fp32:8x16";
  c.repro = "kwb run --op squared_relu_fwd --plugin /p/libmine.so";
  c.plugin = PluginSource{"/p/libmine.so", std::string(64, 'c')};
  return c;
}

TEST(RecordPluginJson, ThePluginRoundTripsAndIsAbsentWithoutOne) {
  const CaseRecord c = plugin_record();
  const auto j = to_json(c);
  ASSERT_TRUE(j.contains("plugin"));
  EXPECT_EQ(j["plugin"]["path"], "/p/libmine.so");
  EXPECT_EQ(j["plugin"]["sha256"], std::string(64, 'c'));
  const CaseRecord back = case_from_json(nlohmann::ordered_json::parse(j.dump()));
  ASSERT_TRUE(back.plugin);
  EXPECT_EQ(*back.plugin, *c.plugin);

  CaseRecord built_in = c;
  built_in.plugin.reset();
  const auto without = to_json(built_in);
  EXPECT_FALSE(without.contains("plugin"));  // older readers see nothing new
  EXPECT_FALSE(case_from_json(nlohmann::ordered_json::parse(without.dump())).plugin);
}

}  // namespace
}  // namespace kwb
