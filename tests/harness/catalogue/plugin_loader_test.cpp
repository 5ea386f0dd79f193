// harness/catalogue/plugin_loader in this process (the CLI tests run the kwb binary): a plugin and
// a Python file of variants load into registries of their own, a second registry included.
#include "harness/catalogue/plugin_loader.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

std::string test_plugin(const std::string& name) {
  return (std::filesystem::path(KWB_TEST_PLUGIN_DIR) / ("libkwb_test_" + name + "_plugin.so")).string();
}

// Two registries, each with the catalogue's rmsnorm_fwd op (the plugin adds a variant to it).
Registry registry_with_rmsnorm() {
  Registry r;
  r.add(*Registry::instance().find_op("rmsnorm_fwd"));
  return r;
}

TEST(PluginLoader, APluginLoadsIntoASecondRegistryOfTheSameProcess) {
  Registry first = registry_with_rmsnorm(), second = registry_with_rmsnorm();
  const PluginSource a = load_plugin(test_plugin("good"), first);
  const PluginSource b = load_plugin(test_plugin("good"), second);
  EXPECT_EQ(a, b);
  for (const Registry* r : {&first, &second}) {
    EXPECT_NE(r->find_op("plugin_test_copy"), nullptr);
    EXPECT_NE(r->find_variant("rmsnorm_fwd", "plugin_test_v1_noop"), nullptr);
    ASSERT_EQ(r->plugins().size(), 1u);
  }
  // Loaded once per registry: the same file again adds nothing.
  load_plugin(test_plugin("good"), first);
  EXPECT_EQ(first.variant_names(true).size(), second.variant_names(true).size());
}

// The same for a Python file (through the bridge, where this build has one): imported again for the
// second registry, as a module of its own.
TEST(PluginLoader, APythonFileLoadsIntoASecondRegistryOfTheSameProcess) {
  const std::string file = KWB_SOURCE_DIR "/python/tests/variant_files/host_only_variants.py";
  Registry first = registry_with_rmsnorm(), second = registry_with_rmsnorm();
  try {
    load_plugin(file, first);
  } catch (const PluginError& e) {
    if (std::string(e.what()).find("cannot load Python modules") != std::string::npos) GTEST_SKIP() << e.what();
    throw;
  }
  load_plugin(file, second);
  for (const Registry* r : {&first, &second}) {
    const Variant* v = r->find_variant("rmsnorm_fwd", "py_host_only");
    ASSERT_NE(v, nullptr);
    ASSERT_EQ(v->tunables.size(), 1u);
    EXPECT_EQ(v->tunables[0].values, (std::vector<std::int64_t>{128, 256}));
    // Its refuse() is the file's: over 8192 columns.
    EXPECT_FALSE(v->refuse(Shape{{{"rows", 4}, {"cols", 512}}}, DType::bf16).has_value());
    EXPECT_EQ(v->refuse(Shape{{{"rows", 4}, {"cols", 16384}}}, DType::bf16).value_or(""), "over 8192 cols");
  }
}

// A new op defined in Python (examples/python/squared_relu_op.py): its tensors, work model and
// NumPy oracle are the file's functions, called through the interpreter.
TEST(PluginLoader, AnOpDefinedInPythonHasTheFilesTensorsWorkAndOracle) {
  Registry r;
  try {
    load_plugin(KWB_SOURCE_DIR "/examples/python/squared_relu_op.py", r);
  } catch (const PluginError& e) {
    if (std::string(e.what()).find("cannot load Python modules") != std::string::npos) GTEST_SKIP() << e.what();
    throw;
  }
  const Op* op = r.find_op("py_squared_relu");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->sample_axis, "rows");
  EXPECT_EQ(r.variants("py_squared_relu", false).size(), 2u);
  const Shape shape{{{"rows", 1}, {"cols", 4}}};
  const std::vector<TensorSpec> specs = op->tensors(shape, DType::bf16);
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "x");
  EXPECT_EQ(specs[1].dims, (std::vector<std::int64_t>{1, 4}));
  EXPECT_TRUE(specs[1].is_output);
  const WorkModel w = op->work(shape, DType::bf16);
  EXPECT_EQ(w.bytes, 16);
  EXPECT_EQ(w.flops, 8);
  std::vector<HostTensor> in(1), out(1);
  in[0].name = "x";
  in[0].dims = {1, 4};
  in[0].values = {-1.5, 2.0, 0.5, -0.0};
  out[0].name = "y";
  out[0].dims = {1, 4};
  out[0].values.assign(4, std::nan(""));
  op->oracle(shape, in, out);
  EXPECT_EQ(out[0].values, (std::vector<double>{0.0, 4.0, 0.25, 0.0}));
}

// A long-lived process (a notebook, the app) asked to load a file again after it changed: refused,
// naming both hashes (its registrations cannot be replaced, and its workers would refuse the new
// bytes); the same bytes again are no change.
TEST(PluginLoader, AFileChangedSinceThisProcessLoadedItIsRefused) {
  test::TempDir dir;
  const auto copy = dir.path() / "libkwb_copy_of_good_plugin.so";
  std::filesystem::copy_file(test_plugin("good"), copy);
  Registry r = registry_with_rmsnorm();
  const PluginSource first = load_plugin(copy, r);
  EXPECT_EQ(load_plugin(copy, r), first);
  std::ofstream(copy, std::ios::app) << "rebuilt";
  try {
    load_plugin(copy, r);
    FAIL() << "a changed plugin was taken as the one loaded";
  } catch (const PluginError& e) {
    EXPECT_NE(std::string(e.what()).find("changed since this process loaded it"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(first.sha256), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kwb
