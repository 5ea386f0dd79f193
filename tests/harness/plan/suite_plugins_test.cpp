// A suite's `plugins:` key: one path or a list, relative paths joined to the suite file's folder
// (a suite and its plugin travel together), absolute ones kept, and a malformed value refused at
// its place.
#include <gtest/gtest.h>

#include "harness/plan/suite_file.hpp"
#include "tests/harness/plan/suite_test_support.hpp"
#include "tests/support/mentions.hpp"

namespace kwb {
namespace {

using test::At;
using test::Mentions;
using test::suite_error;
using test::yaml_lines;

TEST(SuitePlugins, PathsAreReadRelativeToTheSuitesFolder) {
  const SuiteFile s = parse_suite(yaml_lines({"name: t", "plugins: [../build/libmine.so, /opt/lib/libother.so]",
                                              "entries: [{ops: rmsnorm_fwd}]"}),
                                  "suites/nightly/t.yaml");
  ASSERT_EQ(s.plugins.size(), 2u);
  EXPECT_EQ(s.plugins[0].value, "suites/build/libmine.so");
  EXPECT_EQ(s.plugins[1].value, "/opt/lib/libother.so");
  EXPECT_EQ(s.plugins[0].at.line, 2);
  EXPECT_EQ(s.plugins[0].at.key, "plugins[0]");
  const SuiteFile one = parse_suite(yaml_lines({"name: t", "plugins: libmine.so", "entries: [{ops: rmsnorm_fwd}]"}), "t.yaml");
  ASSERT_EQ(one.plugins.size(), 1u);
  EXPECT_EQ(one.plugins[0].value, "libmine.so");
  EXPECT_TRUE(parse_suite(yaml_lines({"name: t", "entries: [{ops: rmsnorm_fwd}]"}), "t.yaml").plugins.empty());
}

TEST(SuitePlugins, AMalformedValueIsRefusedAtItsPlace) {
  auto e = suite_error(yaml_lines({"name: t", "plugins: {a: b}", "entries: [{ops: rmsnorm_fwd}]"}));
  EXPECT_TRUE(At(e, 2, 10, "plugins"));
  e = suite_error(yaml_lines({"name: t", "plugins: []", "entries: [{ops: rmsnorm_fwd}]"}));
  EXPECT_TRUE(At(e, 2, 10, "plugins"));
  e = suite_error(yaml_lines({"name: t", "plugins: [\"\"]", "entries: [{ops: rmsnorm_fwd}]"}));
  ASSERT_TRUE(e);
  EXPECT_TRUE(Mentions(e->message, "the plugin path is empty"));
  // A suite-level key: an entry naming it is told to move it.
  e = suite_error(yaml_lines({"name: t", "entries: [{ops: rmsnorm_fwd, plugins: libmine.so}]"}));
  ASSERT_TRUE(e);
  EXPECT_TRUE(Mentions(e->message, "'plugins' is a suite-level setting"));
}

}  // namespace
}  // namespace kwb
