// Where the oracle cache lives and how large it may grow: flags before variables before defaults,
// sizes read strictly, an unwritable folder turned off with one warning, and the variables that
// hand the settings to a worker.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>

#include "harness/worker/oracle_cache/oracle_cache_settings.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

using test::TempDir;

// Sets (or unsets) the cache variables for one test and puts them back after it.
class CacheEnvironment {
 public:
  explicit CacheEnvironment(std::initializer_list<std::pair<const std::string, std::optional<std::string>>> list) {
    const std::map<std::string, std::optional<std::string>> values(list);
    for (const char* name : {"KWB_CACHE_DIR", "XDG_CACHE_HOME", "HOME", "KWB_ORACLE_CACHE", "KWB_CACHE_MAX_BYTES"}) {
      const char* old = std::getenv(name);
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
      const auto it = values.find(name);
      if (it != values.end() && it->second) setenv(name, it->second->c_str(), 1);
      else if (it != values.end() || std::string(name) != "HOME") unsetenv(name);
    }
  }
  ~CacheEnvironment() {
    for (const auto& [name, value] : saved_) {
      if (value) setenv(name.c_str(), value->c_str(), 1);
      else unsetenv(name.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST(ByteSize, WholeNumbersWithBinarySuffixes) {
  EXPECT_EQ(parse_byte_size("1073741824"), std::uint64_t{1} << 30);
  EXPECT_EQ(parse_byte_size("4G"), std::uint64_t{4} << 30);
  EXPECT_EQ(parse_byte_size("4g"), std::uint64_t{4} << 30);
  EXPECT_EQ(parse_byte_size("4GiB"), std::uint64_t{4} << 30);
  EXPECT_EQ(parse_byte_size("4GB"), std::uint64_t{4} << 30);
  EXPECT_EQ(parse_byte_size("512M"), std::uint64_t{512} << 20);
  EXPECT_EQ(parse_byte_size("64k"), std::uint64_t{64} << 10);
  EXPECT_EQ(parse_byte_size("2T"), std::uint64_t{2} << 40);
  EXPECT_EQ(parse_byte_size("100B"), 100u);
  for (const char* bad : {"", "0", "0G", "-1", "1.5G", "G", "4X", "4 G", " 4G", "4Gi", "4iB", "99999999999999999999",
                          "16777216T", "0x10"})
    EXPECT_FALSE(parse_byte_size(bad)) << bad;
}

TEST(ByteSize, FormattedInBinaryUnits) {
  EXPECT_EQ(format_bytes(12), "12 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(std::uint64_t{4} << 30), "4.0 GiB");
}

TEST(OracleCacheSettings, DefaultsToTheOracleFolderOfTheCacheRoot) {
  {
    CacheEnvironment env({{"KWB_CACHE_DIR", "/tmp/kwb-root"}, {"XDG_CACHE_HOME", "/tmp/xdg"}});
    const auto s = resolve_oracle_cache_settings("", "");
    EXPECT_TRUE(s.enabled);
    EXPECT_EQ(s.dir, std::filesystem::path("/tmp/kwb-root/oracle"));
    EXPECT_EQ(s.dir_source, "$KWB_CACHE_DIR");
    EXPECT_EQ(s.max_bytes, kDefaultOracleCacheMaxBytes);
    EXPECT_EQ(s.max_source, "default");
  }
  {
    CacheEnvironment env({{"XDG_CACHE_HOME", "/tmp/xdg"}});
    EXPECT_EQ(resolve_oracle_cache_settings("", "").dir, std::filesystem::path("/tmp/xdg/kwb/oracle"));
  }
  {
    CacheEnvironment env({{"HOME", "/home/someone"}, {"KWB_CACHE_DIR", ""}});  // empty counts as unset
    const auto s = resolve_oracle_cache_settings("", "");
    EXPECT_EQ(s.dir, std::filesystem::path("/home/someone/.cache/kwb/oracle"));
    EXPECT_EQ(s.dir_source, "$HOME/.cache/kwb");
  }
}

// Without a private folder the cache root falls back to the shared temp folder, where anyone could
// plant an expected answer: the oracle cache is off there, saying how to name a folder.
TEST(OracleCacheSettings, IsOffInTheSharedTempFolder) {
  {
    CacheEnvironment env({{"HOME", std::nullopt}});
    const auto s = resolve_oracle_cache_settings("", "");
    EXPECT_FALSE(s.enabled);
    EXPECT_NE(s.off_reason.find("--oracle-cache DIR"), std::string::npos) << s.off_reason;
  }
  {
    CacheEnvironment env({{"HOME", std::nullopt}});
    EXPECT_TRUE(resolve_oracle_cache_settings("/tmp/mine", "").enabled) << "a folder the user names is used";
  }
  {
    CacheEnvironment env({{"HOME", std::nullopt}, {"KWB_CACHE_DIR", "/tmp/kwb-root"}});
    EXPECT_TRUE(resolve_oracle_cache_settings("", "").enabled) << "so is one named by $KWB_CACHE_DIR";
  }
}

TEST(OracleCacheSettings, TheFlagWinsOverTheVariablesAndOffTurnsItOff) {
  CacheEnvironment env({{"KWB_CACHE_DIR", "/tmp/kwb-root"}, {"KWB_ORACLE_CACHE", "/tmp/from-env"},
                        {"KWB_CACHE_MAX_BYTES", "1G"}});
  auto s = resolve_oracle_cache_settings("", "");
  EXPECT_EQ(s.dir, std::filesystem::path("/tmp/from-env"));
  EXPECT_EQ(s.dir_source, "$KWB_ORACLE_CACHE");
  EXPECT_EQ(s.max_bytes, std::uint64_t{1} << 30);
  EXPECT_EQ(s.max_source, "$KWB_CACHE_MAX_BYTES");
  s = resolve_oracle_cache_settings("/tmp/from-flag", "2G");
  EXPECT_EQ(s.dir, std::filesystem::path("/tmp/from-flag"));
  EXPECT_EQ(s.dir_source, "--oracle-cache");
  EXPECT_EQ(s.max_bytes, std::uint64_t{2} << 30);
  s = resolve_oracle_cache_settings("off", "");
  EXPECT_FALSE(s.enabled);
  EXPECT_EQ(s.off_reason, "--oracle-cache off");
  CacheEnvironment off({{"KWB_ORACLE_CACHE", "off"}});
  s = resolve_oracle_cache_settings("", "");
  EXPECT_FALSE(s.enabled);
  EXPECT_EQ(s.off_reason, "$KWB_ORACLE_CACHE=off");
  EXPECT_TRUE(resolve_oracle_cache_settings("/tmp/x", "").enabled);  // the flag beats the variable's off
}

TEST(OracleCacheSettings, AMalformedSizeIsRefusedNamingWhereItCameFrom) {
  {
    CacheEnvironment env({{"KWB_CACHE_MAX_BYTES", "lots"}});
    try {
      resolve_oracle_cache_settings("", "");
      ADD_FAILURE() << "a malformed variable was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("$KWB_CACHE_MAX_BYTES: 'lots' is not a size"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("4G"), std::string::npos) << e.what();
    }
  }
  try {
    resolve_oracle_cache_settings("", "0");
    ADD_FAILURE() << "a zero bound was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--oracle-cache-max-bytes: '0'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--oracle-cache off"), std::string::npos) << e.what();
  }
}

TEST(OracleCacheSettings, AnUnwritableFolderTurnsTheCacheOffWithOneWarningThatSaysHowToFixIt) {
  TempDir dir;
  std::ofstream(dir / "a-file") << "x";
  CacheEnvironment env({});
  auto s = resolve_oracle_cache_settings((dir / "a-file" / "oracle").string(), "");
  const auto warning = check_oracle_cache(s);
  ASSERT_TRUE(warning);
  EXPECT_FALSE(s.enabled);
  EXPECT_NE(warning->find((dir / "a-file").string()), std::string::npos) << *warning;
  EXPECT_NE(warning->find("every oracle is computed"), std::string::npos) << *warning;
  EXPECT_NE(warning->find("--oracle-cache DIR"), std::string::npos) << *warning;
  EXPECT_FALSE(check_oracle_cache(s)) << "an already-off cache warns no more";
  auto fine = resolve_oracle_cache_settings((dir / "oracle").string(), "");
  EXPECT_FALSE(check_oracle_cache(fine));
  EXPECT_TRUE(fine.enabled);
}

TEST(OracleCacheSettings, TheWorkersVariablesGiveItTheSameSettings) {
  TempDir dir;
  CacheEnvironment env({{"KWB_CACHE_DIR", (dir / "elsewhere").string()}});
  const auto parent = resolve_oracle_cache_settings((dir / "chosen").string(), "3G");
  for (const auto& [name, value] : oracle_cache_environment(parent)) setenv(name.c_str(), value.c_str(), 1);
  const auto worker = resolve_oracle_cache_settings("", "");
  EXPECT_TRUE(worker.enabled);
  EXPECT_EQ(worker.dir, parent.dir);
  EXPECT_EQ(worker.max_bytes, parent.max_bytes);
  const auto cache = oracle_cache_from_environment();
  ASSERT_TRUE(cache);
  EXPECT_EQ(cache->dir(), dir / "chosen");
  EXPECT_EQ(cache->max_bytes(), std::uint64_t{3} << 30);

  OracleCacheSettings off = parent;
  off.enabled = false;
  for (const auto& [name, value] : oracle_cache_environment(off)) setenv(name.c_str(), value.c_str(), 1);
  EXPECT_FALSE(resolve_oracle_cache_settings("", "").enabled);
  EXPECT_FALSE(oracle_cache_from_environment());
}

}  // namespace
}  // namespace kwb
