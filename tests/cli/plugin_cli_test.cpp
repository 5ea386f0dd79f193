// `kwb list|run --plugin`, a suite's plugins and $KWB_PLUGINS on the real binary, with the test
// plugins of tests/plugins/ (built against the build tree's kwb::plugin): what a sound plugin adds
// to the catalogue and the report's vocabulary, and each way a plugin is refused (exit 2, the
// reason, the plugin's path) before anything runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "harness/catalogue/plugin_hash.hpp"
#include "harness/record/journal.hpp"
#include "harness/record/json_report.hpp"
#include "tests/support/report_test_support.hpp"
#include "tests/support/command.hpp"
#include "tests/support/mentions.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace plugin_cli_test {
namespace {

namespace fs = std::filesystem;
using test::Mentions;
using test::shell_quote;

std::string plugin_path(const std::string& name) {
  return (fs::path(KWB_TEST_PLUGIN_DIR) / ("libkwb_test_" + name + "_plugin.so")).string();
}

// `kwb ARGS` with no GPU and no plugin inherited from the environment.
test::CommandResult kwb(const std::string& args, const std::string& env = "") {
  return test::run_command("env -u KWB_PLUGINS -u KWB_PLUGINS_SHA256 CUDA_VISIBLE_DEVICES= " + env + " " + shell_quote(KWB_CLI_PATH) +
                           " " + args);
}

TEST(PluginCli, ListShowsAPluginsOpVariantsPathAndHash) {
  const std::string good = plugin_path("good");
  const auto r = kwb("list --plugin " + shell_quote(good));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Mentions(r, "\nplugin_test_copy "));  // an op line, at the left margin
  EXPECT_TRUE(Mentions(r, "  plugin " + good + " (sha256 " + sha256_hex_of_file(good).substr(0, 16) + ")"));
  EXPECT_TRUE(Mentions(r, "variants: plugin_test_copy:plugin_v1_copy, rmsnorm_fwd:plugin_test_v1_noop"));
  const auto details = kwb("list --plugin " + shell_quote(good) + " --op plugin_test_copy,rmsnorm_fwd");
  ASSERT_EQ(details.exit_code, 0) << details.output;
  EXPECT_TRUE(Mentions(details, "  from plugin " + good));
  EXPECT_TRUE(Mentions(details, "plugin_test_v1_noop"));
  // Without the plugin, none of it.
  const auto plain = kwb("list");
  EXPECT_EQ(plain.output.find("plugin_test_copy"), std::string::npos) << plain.output;
}

TEST(PluginCli, TheSamePluginTwiceLoadsOnceAndTheEnvironmentLoadsItToo) {
  const std::string good = plugin_path("good");
  const auto twice = kwb("list --plugin " + shell_quote(good) + " --plugin " + shell_quote(good));
  ASSERT_EQ(twice.exit_code, 0) << twice.output;
  // $KWB_PLUGINS is how a run's workers receive the plugins: every verb reads it.
  const auto from_env = kwb("list", "KWB_PLUGINS=" + shell_quote(good));
  ASSERT_EQ(from_env.exit_code, 0) << from_env.output;
  EXPECT_TRUE(Mentions(from_env, "\nplugin_test_copy "));
  const auto bad_env = kwb("list", "KWB_PLUGINS=/no/such/libplugin.so");
  EXPECT_EQ(bad_env.exit_code, 2) << bad_env.output;
  EXPECT_TRUE(Mentions(bad_env, "$KWB_PLUGINS: plugin '/no/such/libplugin.so': no such file"));
}

// A run hands its workers each plugin's SHA-256 beside its path: a worker (a restarted one too)
// refuses a plugin whose file changed since the run loaded it.
TEST(PluginCli, AWorkerRefusesAPluginWhoseFileChangedSinceTheRunLoadedIt) {
  const std::string good = plugin_path("good");
  const std::string sha = sha256_hex_of_file(good);
  const auto same = kwb("list", "KWB_PLUGINS=" + shell_quote(good) + " KWB_PLUGINS_SHA256=" + sha);
  ASSERT_EQ(same.exit_code, 0) << same.output;
  EXPECT_TRUE(Mentions(same, "\nplugin_test_copy "));
  const std::string other(64, '0');
  const auto changed = kwb("list", "KWB_PLUGINS=" + shell_quote(good) + " KWB_PLUGINS_SHA256=" + other);
  EXPECT_EQ(changed.exit_code, 2) << changed.output;
  EXPECT_TRUE(Mentions(changed, "changed since the run loaded it (sha256 " + other + " then, " + sha + " now)"));
  const auto miscounted =
      kwb("list", "KWB_PLUGINS=" + shell_quote(good) + " KWB_PLUGINS_SHA256=" + sha + ":" + other);
  EXPECT_EQ(miscounted.exit_code, 2) << miscounted.output;
  EXPECT_TRUE(Mentions(miscounted, "1 plugin(s) but 2 hash(es)"));
}

// A run's journal keeps the plugins it loaded with their hashes: `--resume` loads them again
// (the plan names their ops) and refuses a file that changed since.
TEST(PluginCli, AResumeLoadsTheJournalsPluginsAndRefusesAChangedOne) {
  const std::string good = plugin_path("good");
  const auto listed = kwb("run --plugin " + shell_quote(good) + " --op plugin_test_copy --dtype fp32 --list-cases 2>/dev/null");
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  std::vector<std::string> plan;
  for (std::size_t at = 0, end; (end = listed.output.find('\n', at)) != std::string::npos; at = end + 1)
    if (listed.output.compare(at, 17, "plugin_test_copy:") == 0) plan.push_back(listed.output.substr(at, end - at));
  ASSERT_FALSE(plan.empty()) << listed.output;
  auto write_journal = [&](const test::TempDir& dir, const std::string& sha) {
    JournalHeader header;
    header.plan_flags = {{"op", {"plugin_test_copy"}}, {"dtype", {"fp32"}},
                         {"plugins", {{{"path", good}, {"sha256", sha}}}}};
    header.plan = plan;
    header.run = test::rich_report().run;
    Journal(dir / "out" / "journal.jsonl").write_header(header);
  };
  const test::TempDir same, changed;
  write_journal(same, sha256_hex_of_file(good));
  const auto resumed = kwb("run --resume " + shell_quote((same / "out").string()) + " --no-measure");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_FALSE(read_report_json(same / "out" / "report.json").run.complete);
  const std::string other(64, 'f');
  write_journal(changed, other);
  const auto refused = kwb("run --resume " + shell_quote((changed / "out").string()) + " --no-measure");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_TRUE(Mentions(refused, "changed since the run loaded it (sha256 " + other + " then"));
}

TEST(PluginCli, RunPlansAPluginsOpFromTheFlagAndFromASuite) {
  const std::string good = plugin_path("good");
  const auto r = kwb("run --plugin " + shell_quote(good) + " --op plugin_test_copy --list-cases");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Mentions(r, "plugin_test_copy:plugin_v1_copy:fp32:1024"));
  test::TempDir dir;
  fs::create_directories(dir / "suites");
  fs::copy_file(good, dir / "libgood.so");
  std::ofstream(dir / "suites" / "s.yaml") << "name: s\nplugins: ../libgood.so\nentries: [{ops: plugin_test_copy}]\n";
  const auto suite = kwb("run --suite " + shell_quote((dir / "suites" / "s.yaml").string()) + " --list-cases");
  ASSERT_EQ(suite.exit_code, 0) << suite.output;
  EXPECT_TRUE(Mentions(suite, "plugin_test_copy:plugin_v1_copy:fp32:1024"));
  // A suite whose plugin is missing: refused at the plugin's line.
  std::ofstream(dir / "suites" / "missing.yaml")
      << "name: s\nplugins: [../libgood.so, ../nothing.so]\nentries: [{ops: plugin_test_copy}]\n";
  const auto missing = kwb("run --suite " + shell_quote((dir / "suites" / "missing.yaml").string()) + " --list-cases");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_TRUE(Mentions(missing, "missing.yaml:2:26: plugins[1]: plugin '"));
  EXPECT_TRUE(Mentions(missing, "nothing.so': no such file"));
}

TEST(PluginCli, EachBadPluginIsRefusedWithExitTwoAndItsReason) {
  test::TempDir dir;
  std::ofstream(dir / "text.so") << "not a shared library\n";
  struct Refusal {
    std::string path, expected;
  };
  const std::vector<Refusal> refusals = {
      {(dir / "missing.so").string(), "no such file"},
      {(dir / "text.so").string(), "cannot be loaded"},
      {"/bin/sh", "cannot be loaded"},  // an executable, not a library
      {plugin_path("mismatched"),
       "was built for kwb 0.0.1-older, api 0000000000000000, gcc 1, libstdc++ 1 cxx11-abi 1; this is kwb "},
      {plugin_path("empty"), "registered no op and no variant"},
      {plugin_path("clashing"),
       "variant 'rmsnorm_fwd:fused_v1_row_per_block' of plugin " + plugin_path("clashing") +
           " clashes with variant 'rmsnorm_fwd:fused_v1_row_per_block' built into kwb"},
      {plugin_path("bad_variant"), "variant 'plugin_test_bad:v1_without_launch' has no .launch function"},
      {plugin_path("bad_variant"), "names op 'plugin_test_no_such_op', which is not registered"},
  };
  for (const Refusal& refusal : refusals) {
    SCOPED_TRACE(refusal.path);
    for (const std::string verb : {"list", "run --list-cases"}) {
      const auto r = kwb(verb + " --plugin " + shell_quote(refusal.path));
      EXPECT_EQ(r.exit_code, 2) << r.output;
      EXPECT_TRUE(Mentions(r, "--plugin: plugin '"));
      EXPECT_TRUE(Mentions(r, refusal.expected));
    }
  }
}

}  // namespace
}  // namespace plugin_cli_test
}  // namespace kwb
