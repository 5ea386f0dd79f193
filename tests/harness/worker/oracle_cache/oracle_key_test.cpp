// The oracle cache's key: every component the expected values depend on changes it, and nothing
// else does.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "harness/worker/oracle_cache/oracle_cache.hpp"
#include "harness/worker/oracle_cache/oracle_key.hpp"
#include "tests/plugins/test_plugin_op.hpp"

namespace kwb {
namespace {

// A sampled group: 2 blocks of 32 of 4096 rows, x at its sampled dims, a weight, one output.
struct Group {
  OracleKeyParts parts;
  std::vector<HostTensor> inputs, outputs;
};

Group sample_group() {
  Group g;
  g.parts.op = "rmsnorm_fwd";
  g.parts.dtype = DType::bf16;
  g.parts.shape.axes = {{"rows", 4096}, {"cols", 256}};
  g.parts.seed = 1;
  g.parts.plan.sampled = true;
  g.parts.plan.axis = "rows";
  g.parts.plan.axis_size = 4096;
  for (std::int64_t i = 0; i < 32; ++i) g.parts.plan.indices.push_back(i);
  for (std::int64_t i = 4064; i < 4096; ++i) g.parts.plan.indices.push_back(i);
  std::mt19937_64 rng(42);
  std::normal_distribution<double> normal;
  HostTensor x{"x", {64, 256}, std::vector<double>(64 * 256)};
  HostTensor w{"weight", {256}, std::vector<double>(256)};
  for (double& v : x.values) v = normal(rng);
  for (double& v : w.values) v = 1 + 0.1 * normal(rng);
  g.inputs = {x, w};
  g.outputs = {{"y", {64, 256}, std::vector<double>(64 * 256, NAN)}};
  return g;
}

OracleKey key_of(const Group& g) { return make_oracle_key(g.parts, key_inputs(g.inputs), g.outputs); }

TEST(OracleKey, TheSameGroupGivesTheSameKey) {
  const OracleKey a = key_of(sample_group());
  const OracleKey b = key_of(sample_group());
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.digest, b.digest);
}

TEST(OracleKey, EveryComponentChangesTheKey) {
  const OracleKey base = key_of(sample_group());
  const std::vector<std::pair<std::string, std::function<void(Group&)>>> changes = {
      {"op", [](Group& g) { g.parts.op = "rmsnorm_bwd"; }},
      {"dtype", [](Group& g) { g.parts.dtype = DType::fp16; }},
      {"shape", [](Group& g) { g.parts.shape.axes[1].second = 257; }},
      {"axis order", [](Group& g) { std::swap(g.parts.shape.axes[0], g.parts.shape.axes[1]); }},
      {"seed", [](Group& g) { g.parts.seed = 2; }},
      {"sampled flag", [](Group& g) { g.parts.plan.sampled = false; }},
      {"sample axis", [](Group& g) { g.parts.plan.axis = "cols"; }},
      {"axis size", [](Group& g) { g.parts.plan.axis_size = 4097; }},
      {"one sampled index", [](Group& g) { g.parts.plan.indices[40] += 1; }},
      {"oracle code version", [](Group& g) { g.parts.oracle_version = "0123456789abcdef0123456789abcdef"; }},
      {"one input value by one ulp",
       [](Group& g) { g.inputs[0].values[1234] = std::nextafter(g.inputs[0].values[1234], 1e9); }},
      {"an input's name", [](Group& g) { g.inputs[1].name = "w"; }},
      {"an input's dims, same values", [](Group& g) { g.inputs[0].dims = {128, 128}; }},
      {"the inputs' order", [](Group& g) { std::swap(g.inputs[0], g.inputs[1]); }},
      {"an output's name", [](Group& g) { g.outputs[0].name = "out"; }},
      {"an output's dims", [](Group& g) { g.outputs[0].dims = {32, 512}; }},
  };
  for (const auto& [what, change] : changes) {
    Group g = sample_group();
    change(g);
    const OracleKey k = key_of(g);
    EXPECT_NE(k.text, base.text) << what;
    EXPECT_NE(k.digest, base.digest) << what;
  }
}

TEST(OracleKey, AnInputsSignOfZeroChangesIt) {
  Group plus = sample_group(), minus = sample_group();
  plus.inputs[1].values[3] = 0.0;
  minus.inputs[1].values[3] = -0.0;
  EXPECT_NE(key_of(plus).text, key_of(minus).text);
}

TEST(OracleKey, TheExpectedValuesThemselvesAreNotPartOfIt) {
  // The outputs are given for their layout: what the oracle will write must not move the key.
  Group g = sample_group();
  const OracleKey before = key_of(g);
  for (double& v : g.outputs[0].values) v = 1.5;
  EXPECT_EQ(key_of(g).text, before.text);
}

TEST(OracleKey, TextNamesItsPartsAndTheSampledIndicesForWhoeverReadsAnEntry) {
  const OracleKey k = key_of(sample_group());
  for (const char* part : {"op rmsnorm_fwd\n", "dtype bf16\n", "shape rows=4096,cols=256\n", "seed 1\n",
                           "sample sampled axis 'rows' of 4096: 64 indices", "indices 0,1,2,", "4094,4095\n",
                           "input x fp64 [64,256]\n", "input weight fp64 [256]\n", "inputs digest ", "output y [64,256]\n"})
    EXPECT_NE(k.text.find(part), std::string::npos) << part << " not in\n" << k.text;
  EXPECT_NE(k.text.find("oracle code " + std::string(oracle_code_version())), std::string::npos);
}

TEST(OracleKey, FileNameIsTheDigestAndTheSuffix) {
  const OracleKey k = key_of(sample_group());
  EXPECT_EQ(k.file_name(), k.digest.hex() + ".kwb-oracle");
  EXPECT_TRUE(is_oracle_entry_name(k.file_name()));
  EXPECT_TRUE(is_oracle_temp_name(k.file_name() + ".tmp.123.0"));
  EXPECT_FALSE(is_oracle_entry_name(k.file_name() + ".tmp.123.0"));
  EXPECT_FALSE(is_oracle_entry_name("ceilings-v5-GPU-1-driver580.json"));
  EXPECT_FALSE(is_oracle_entry_name("0123456789ABCDEF0123456789ABCDEF.kwb-oracle"));  // ours are lower case
}

TEST(OracleKey, TheBuildsOracleCodeVersionIsAHashOfItsSources) {
  const std::string_view v = oracle_code_version();
  ASSERT_EQ(v.size(), 32u);
  for (char c : v) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << v;
}

// An op a plugin brought is keyed with its file's hash: a rebuilt plugin (another oracle, perhaps)
// never gets the answers of the old one; kwb's own ops keep kwb's oracle code version alone.
TEST(OracleKey, APluginsOpIsKeyedWithThePluginsHash) {
  Registry r;
  r.add(kwb_test_plugin::copy_op("oracle_key_builtin"));
  Registry plugin;
  plugin.add(kwb_test_plugin::copy_op("oracle_key_from_plugin"));
  ASSERT_TRUE(r.adopt(plugin, PluginSource{"/p/libp.so", std::string(64, 'c')}).empty());
  EXPECT_EQ(oracle_version_of("oracle_key_builtin", r), std::string(oracle_code_version()));
  const std::string from_plugin = oracle_version_of("oracle_key_from_plugin", r);
  EXPECT_NE(from_plugin.find(std::string(64, 'c')), std::string::npos) << from_plugin;
  Registry rebuilt;
  Registry plugin2;
  plugin2.add(kwb_test_plugin::copy_op("oracle_key_from_plugin"));
  ASSERT_TRUE(rebuilt.adopt(plugin2, PluginSource{"/p/libp.so", std::string(64, 'd')}).empty());
  EXPECT_NE(oracle_version_of("oracle_key_from_plugin", rebuilt), from_plugin);
}

// The key digests the bytes the device holds with their type: the same bytes read as another type
// (bf16 against fp16: other values) are another key, and so are other bytes.
TEST(OracleKey, RawInputsAreKeyedByTheirBytesAndTheirType) {
  Group g = sample_group();
  const std::vector<unsigned char> bytes(64 * 256 * 2, 0x3f);
  auto key = [&](const std::string& type, const std::vector<unsigned char>& b) {
    return make_oracle_key(g.parts, {KeyInput{"x", {64, 256}, type, b}}, g.outputs).digest;
  };
  EXPECT_EQ(key("bf16", bytes), key("bf16", bytes));
  EXPECT_NE(key("bf16", bytes), key("fp16", bytes));
  std::vector<unsigned char> other = bytes;
  other[777] ^= 1;
  EXPECT_NE(key("bf16", bytes), key("bf16", other));
}

}  // namespace
}  // namespace kwb
