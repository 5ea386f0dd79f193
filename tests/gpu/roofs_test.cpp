// On a GPU: a variant whose output verifies but whose timed launches do a sliver of the work
// fails the roof rule, naming the roof, with its figures kept; the read-only ceiling is the best
// of several read kernels; a cached ceiling is re-checked by a short copy and measured again
// when the copy reads more than 3% above it, and the console and the report say so.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "harness/record/json_report.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace kwb {
namespace {

TEST(Roofs, ResultPrecomputedInPrepareVerifiesAndFailsTheRoofRule) {
  KWB_REQUIRE_GPU();
  // 1. The honest test_colsum variant beside the one that copies a result worked out in
  //    prepare(): 256 MiB of x "read" by a copy of 64 KiB.
  const test::TempDir dir;
  const auto out = dir.path() / "out";
  const auto result = test::run_command(
      "KWB_CACHE_DIR=" + test::shell_quote((dir.path() / "cache").string()) + " " + KWB_CLI_PATH +
      " run --op test_colsum --variant test_simple,test_result_precomputed_in_prepare --include-test-variants"
      " --dtype fp32 --axis rows=8192 --axis cols=8192 --preset quick --datasheet-ceilings --out " +
      test::shell_quote(out.string()));
  // 2. Exit 1 (a case failed); both cases recorded.
  EXPECT_EQ(result.exit_code, 1) << result.output;
  const Report report = read_report_json(out / "report.json");
  ASSERT_EQ(report.cases.size(), 2u) << result.output;
  for (const CaseRecord& c : report.cases) {
    ASSERT_TRUE(c.verify.has_value()) << c.variant;
    EXPECT_TRUE(c.verify->passed) << c.variant << ": its output is right; only its time is impossible";
    ASSERT_TRUE(c.timing.has_value()) << c.variant << " " << c.reason;
    ASSERT_TRUE(c.derived.has_value()) << c.variant;
    if (c.variant == "test_simple") {
      EXPECT_EQ(c.disposition, Disposition::passed) << c.reason;
      EXPECT_LT(c.derived->pct_of_bandwidth_ceiling, 100) << c.variant;
    } else {
      // 3. Failed by the roof rule, with the roof named and the figures kept.
      EXPECT_EQ(c.disposition, Disposition::failed);
      EXPECT_NE(c.reason.find("above its roof"), std::string::npos) << c.reason;
      EXPECT_NE(c.reason.find("DRAM roof"), std::string::npos) << c.reason;
      EXPECT_GT(c.derived->pct_of_bandwidth_ceiling, 500) << c.reason;
    }
  }
  EXPECT_NE(result.output.find("above its roof"), std::string::npos) << "the console names it\n" << result.output;
}

TEST(Roofs, ReadCeilingIsTheBestOfSeveralKernelsAndAStaleCacheIsMeasuredAgain) {
  KWB_REQUIRE_GPU();
  const test::TempDir dir;
  const std::string env = "KWB_CACHE_DIR=" + test::shell_quote((dir.path() / "cache").string()) + " ";
  // 1. Measure the ceilings into an empty cache.
  const auto measured = test::run_command(env + KWB_CLI_PATH + " ceilings --log " +
                                          test::shell_quote((dir.path() / "ceilings.log").string()));
  ASSERT_EQ(measured.exit_code, 0) << measured.output;
  std::filesystem::path cache;
  for (const auto& e : std::filesystem::directory_iterator(dir.path() / "cache")) cache = e.path();
  ASSERT_EQ(cache.filename().string().rfind("ceilings-v7-", 0), 0u) << cache;
  nlohmann::ordered_json c = nlohmann::ordered_json::parse(std::ifstream(cache));
  // The read-only figure is the best of at least six kernels at two sizes and two flushes.
  ASSERT_TRUE(c.contains("dram_read_by_method")) << c.dump(2);
  EXPECT_GE(c["dram_read_by_method"].size(), 24u) << c.dump(2);
  double best = 0;
  for (const auto& [name, gbps] : c["dram_read_by_method"].items()) best = std::max(best, gbps.get<double>());
  EXPECT_DOUBLE_EQ(c["dram_read_gbps"].get<double>(), best);
  EXPECT_EQ(c["dram_read_by_method"][c["dram_read_method"].get<std::string>()].get<double>(), best);
  EXPECT_GT(best, 0.8 * c["dram_copy_gbps"].get<double>()) << "reads stream at least near the copy";
  // The write-only figure likewise: the best of five writers at two sizes and two flushes.
  ASSERT_TRUE(c.contains("dram_write_by_method")) << c.dump(2);
  EXPECT_GE(c["dram_write_by_method"].size(), 20u) << c.dump(2);
  double best_write = 0;
  for (const auto& [name, gbps] : c["dram_write_by_method"].items()) best_write = std::max(best_write, gbps.get<double>());
  EXPECT_DOUBLE_EQ(c["dram_write_gbps"].get<double>(), best_write);
  const double copy = c["dram_copy_gbps"].get<double>();

  const std::string run = env + KWB_CLI_PATH +
      " run --op rmsnorm_fwd --variant fused_v2_vec16 --dtype bf16 --axis rows=4096 --axis cols=4096 --preset quick"
      " --out ";
  // 2. A fresh cache: the short copy reads within 3% of it, and it is kept.
  const auto kept = test::run_command(run + test::shell_quote((dir.path() / "kept").string()));
  ASSERT_EQ(kept.exit_code, 0) << kept.output;
  EXPECT_NE(kept.output.find("re-checked"), std::string::npos) << kept.output;
  EXPECT_NE(kept.output.find(": kept"), std::string::npos) << kept.output;
  const Report kept_report = read_report_json(dir.path() / "kept" / "report.json");
  ASSERT_TRUE(kept_report.run.settings.count("ceilings_check")) << kept.output;
  EXPECT_DOUBLE_EQ(kept_report.run.ceilings->dram_copy_gbps, copy);

  // 3. The cache's copy figure lowered by 10% (as if measured throttled): the short copy reads
  //    ~11% above it, so the ceilings are measured again and the cache is rewritten.
  c["dram_copy_gbps"] = 0.9 * copy;
  std::ofstream(cache) << c.dump(2) << "\n";
  const auto stale = test::run_command(run + test::shell_quote((dir.path() / "stale").string()));
  ASSERT_EQ(stale.exit_code, 0) << stale.output;
  EXPECT_NE(stale.output.find("measured again"), std::string::npos) << stale.output;
  const Report stale_report = read_report_json(dir.path() / "stale" / "report.json");
  ASSERT_TRUE(stale_report.run.settings.count("ceilings_check"));
  EXPECT_NE(stale_report.run.settings.at("ceilings_check").find("measured again"), std::string::npos);
  EXPECT_GT(stale_report.run.ceilings->dram_copy_gbps, 0.97 * copy) << "the re-measured ceiling is used";
  const nlohmann::ordered_json rewritten = nlohmann::ordered_json::parse(std::ifstream(cache));
  EXPECT_GT(rewritten["dram_copy_gbps"].get<double>(), 0.97 * copy) << "and cached";
}

}  // namespace
}  // namespace kwb
