// `kwb cache show|clear` on a temp folder, and what `kwb run` does with an oracle cache it cannot
// use: the real binary, as a user runs it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "harness/worker/oracle_cache/oracle_cache.hpp"
#include "tests/support/command.hpp"
#include "tests/support/mentions.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

namespace fs = std::filesystem;
using test::Mentions;
using test::shell_quote;
using test::TempDir;

// `kwb <args>` with the cache root in `root` and no other cache variable.
test::CommandResult kwb_with_cache(const fs::path& root, const std::string& args) {
  return test::run_command("env -u KWB_ORACLE_CACHE -u KWB_CACHE_MAX_BYTES KWB_CACHE_DIR=" +
                           shell_quote(root.string()) + " CUDA_VISIBLE_DEVICES= " + shell_quote(KWB_CLI_PATH) +
                           " " + args);
}

void store_entries(const fs::path& dir, int n) {
  OracleCache cache(dir, std::uint64_t{1} << 30);
  for (int i = 0; i < n; ++i) {
    OracleKeyParts parts;
    parts.op = "op_" + std::to_string(i);
    const OracleKey key = make_oracle_key(parts, {}, {{"y", {100}, {}}});
    ASSERT_EQ(cache.store(key, {{"y", {100}, std::vector<double>(100, 0.25 * i)}}, 1000.0 * (i + 1)),
              OracleCache::StoreResult::stored);
  }
}

TEST(CacheCli, ShowNamesTheFolderItsEntriesTheBoundAndWhetherItCanBeWritten) {
  TempDir root;
  auto r = kwb_with_cache(root.path(), "cache show");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Mentions(r, "oracle cache: " + (root / "oracle").string()));
  EXPECT_TRUE(Mentions(r, "$KWB_CACHE_DIR"));
  EXPECT_TRUE(Mentions(r, "entries:    0 (0 B of a 16.0 GiB bound"));
  EXPECT_TRUE(Mentions(r, "writable:   yes (the folder is made by the first run"));
  EXPECT_FALSE(fs::exists(root / "oracle")) << "show created the folder";

  store_entries(root / "oracle", 3);
  std::ofstream(root / "ceilings-v5-GPU-1-driver580.json") << "{}";
  r = kwb_with_cache(root.path(), "cache show");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Mentions(r, "entries:    3 ("));
  EXPECT_TRUE(Mentions(r, "saves:      6.0 s of oracle time"));
  EXPECT_TRUE(std::regex_search(r.output, std::regex("last used:  oldest \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d, newest ")))
      << r.output;
  EXPECT_TRUE(Mentions(r, "writable:   yes\n"));
  EXPECT_TRUE(Mentions(r, "measured ceilings: 1 file(s)"));
  EXPECT_TRUE(Mentions(r, "kwb cache clear"));
}

TEST(CacheCli, ShowReadsTheBoundFromTheEnvironmentAndTheFolderFromTheFlag) {
  TempDir root;
  store_entries(root / "mine", 2);
  const auto r = test::run_command("KWB_CACHE_MAX_BYTES=512M " + shell_quote(KWB_CLI_PATH) +
                                   " cache show --oracle-cache " + shell_quote((root / "mine").string()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Mentions(r, "oracle cache: " + (root / "mine").string()));
  EXPECT_TRUE(Mentions(r, "chosen by:  --oracle-cache"));
  EXPECT_TRUE(Mentions(r, "entries:    2 ("));
  EXPECT_TRUE(Mentions(r, "of a 512.0 MiB bound, from $KWB_CACHE_MAX_BYTES"));
}

TEST(CacheCli, ClearRemovesTheEntriesOnlyAndSaysHowMany) {
  TempDir root;
  store_entries(root / "oracle", 4);
  std::ofstream(root / "oracle" / "keep.txt") << "not ours";
  std::ofstream(root / "ceilings-v5-GPU-1-driver580.json") << "{}";
  auto r = kwb_with_cache(root.path(), "cache clear");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Mentions(r, "removed 4 oracle cache file(s) ("));
  EXPECT_TRUE(Mentions(r, (root / "oracle").string()));
  EXPECT_TRUE(fs::exists(root / "oracle" / "keep.txt"));
  EXPECT_TRUE(fs::exists(root / "ceilings-v5-GPU-1-driver580.json"));
  r = kwb_with_cache(root.path(), "cache show");
  EXPECT_TRUE(Mentions(r, "entries:    0 ("));
  r = kwb_with_cache(root / "never-made", "cache clear");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Mentions(r, "nothing to clear"));
}

TEST(CacheCli, AFolderThatIsAFileIsAnErrorThatSaysWhereAndHowToFixIt) {
  TempDir root;
  std::ofstream(root / "plain") << "x";
  for (const char* verb : {"show", "clear"}) {
    const auto r = kwb_with_cache(root.path(), std::string("cache ") + verb + " --oracle-cache " +
                                                   shell_quote((root / "plain").string()));
    EXPECT_EQ(r.exit_code, 1) << verb << ": " << r.output;
    EXPECT_TRUE(Mentions(r, "cannot read " + (root / "plain").string()));
    EXPECT_TRUE(Mentions(r, verb == std::string("show") ? "point the cache elsewhere" : "remove it by hand"));
  }
}

TEST(CacheCli, BadInputIsRefusedWithExitTwo) {
  TempDir root;
  auto r = kwb_with_cache(root.path(), "cache");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = kwb_with_cache(root.path(), "cache show --oracle-cache off");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "'off' names no folder"));
  r = test::run_command("KWB_CACHE_MAX_BYTES=huge " + shell_quote(KWB_CLI_PATH) + " cache show");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "$KWB_CACHE_MAX_BYTES: 'huge' is not a size"));
  r = test::run_command("KWB_ORACLE_CACHE=off " + shell_quote(KWB_CLI_PATH) + " cache show");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Mentions(r, "oracle cache: off ($KWB_ORACLE_CACHE=off)"));
}

// `kwb run` with a cache folder it cannot create: one warning, then the run goes on (here to the
// no-GPU message, exit 3, on a machine without one; the GPU test checks a real run).
TEST(CacheCli, RunWithAnUnwritableCacheWarnsOnceAndGoesOn) {
  TempDir root;
  std::ofstream(root / "a-file") << "x";
  const auto r = kwb_with_cache(root.path(), "run --op rmsnorm_fwd --dtype bf16 --axis rows=1024 --axis cols=1024 "
                                             "--oracle-cache " + shell_quote((root / "a-file" / "oracle").string()) +
                                             " --out " + shell_quote((root / "out").string()));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  const std::string warning = "warning: the oracle cache is off for this run";
  const auto first = r.output.find(warning);
  ASSERT_NE(first, std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("oracle cache", first + warning.size()), std::string::npos) << "said twice:\n" << r.output;
  EXPECT_TRUE(Mentions(r, (root / "a-file").string()));
}

TEST(CacheCli, RunRefusesAMalformedBoundAndListingCasesTouchesNoCache) {
  TempDir root;
  auto r = kwb_with_cache(root.path(), "run --op rmsnorm_fwd --oracle-cache-max-bytes 4X --list-cases");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "--oracle-cache-max-bytes: '4X' is not a size"));
  r = kwb_with_cache(root.path(), "run --op rmsnorm_fwd --list-cases");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(fs::exists(root / "oracle"));
}

}  // namespace
}  // namespace kwb
