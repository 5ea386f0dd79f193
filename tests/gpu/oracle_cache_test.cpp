// On a GPU: the oracle cache seen from `kwb run`. The first run computes a group's oracle and
// stores it; a second run reads it (every case says so) and verifies alike; a damaged entry is
// computed again and rebuilt; `--oracle-cache off` computes and stores nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "harness/record/json_report.hpp"
#include "harness/worker/oracle_cache/oracle_cache.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace kwb {
namespace {

namespace fs = std::filesystem;

// Every variant of rmsnorm_fwd at one sampled shape: one group, so one oracle answer.
Report verify_run(const fs::path& cache_root, const fs::path& out, const std::string& extra = "") {
  const auto r = test::run_command("KWB_CACHE_DIR=" + test::shell_quote(cache_root.string()) +
                                   " KWB_ORACLE_CACHE= " + KWB_CLI_PATH +
                                   " run --op rmsnorm_fwd --dtype bf16 --axis rows=65536 --axis cols=4096"
                                   " --preset verify --datasheet-ceilings --out " + test::shell_quote(out.string()) +
                                   " " + extra);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return read_report_json(out / "report.json");
}

std::set<std::string> oracle_sources(const Report& report) {
  std::set<std::string> sources;
  for (const CaseRecord& c : report.cases) {
    EXPECT_EQ(c.disposition, Disposition::passed) << c.variant << ": " << c.reason;
    if (c.verify) sources.insert(c.verify->oracle_source);
  }
  return sources;
}

TEST(OracleCacheRun, TheSecondRunReadsTheFirstRunsOracleAndADamagedEntryIsRebuilt) {
  KWB_REQUIRE_GPU();
  const test::TempDir dir;
  const OracleCache cache(dir / "cache" / "oracle", std::uint64_t{4} << 30);
  // 1. Computed once for the group, shared by its variants, stored.
  const Report first = verify_run(dir / "cache", dir / "first");
  ASSERT_GE(first.cases.size(), 2u);
  EXPECT_EQ(oracle_sources(first), std::set<std::string>{"computed"});
  ASSERT_EQ(cache.contents().entries, 1u);
  // 2. Read back by a later run: same verdicts, same checked elements.
  const Report second = verify_run(dir / "cache", dir / "second");
  EXPECT_EQ(oracle_sources(second), std::set<std::string>{"cache"});
  ASSERT_EQ(second.cases.size(), first.cases.size());
  for (std::size_t i = 0; i < first.cases.size(); ++i) {
    ASSERT_TRUE(first.cases[i].verify && second.cases[i].verify);
    EXPECT_EQ(second.cases[i].verify->elements_checked, first.cases[i].verify->elements_checked);
    EXPECT_EQ(second.cases[i].verify->sampling, first.cases[i].verify->sampling);
  }
  // 3. A cut entry: computed again, and the entry rebuilt whole.
  fs::path entry;
  for (const auto& e : fs::directory_iterator(cache.dir())) entry = e.path();
  const auto size = fs::file_size(entry);
  fs::resize_file(entry, size / 2);
  EXPECT_EQ(oracle_sources(verify_run(dir / "cache", dir / "third")), std::set<std::string>{"computed"});
  EXPECT_EQ(fs::file_size(entry), size);
  EXPECT_EQ(oracle_sources(verify_run(dir / "cache", dir / "fourth")), std::set<std::string>{"cache"});
}

TEST(OracleCacheRun, OffComputesEveryOracleAndStoresNothing) {
  KWB_REQUIRE_GPU();
  const test::TempDir dir;
  const Report report = verify_run(dir / "cache", dir / "out", "--oracle-cache off");
  EXPECT_EQ(oracle_sources(report), std::set<std::string>{"computed"});
  EXPECT_FALSE(fs::exists(dir / "cache" / "oracle"));
}

}  // namespace
}  // namespace kwb
