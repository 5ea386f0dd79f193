// The review tables: units formatted once, untimed cases shown as dashes, both ceiling sources.
#include <gtest/gtest.h>

#include "reports/review/review_tables.hpp"
#include "tests/reports/review/review_test_support.hpp"

namespace kwb {
namespace {

using test::make_case;

TEST(ReviewTables, FormatBytesUsesBinaryUnits) {
  EXPECT_EQ(review::format_bytes(0), "0 B");
  EXPECT_EQ(review::format_bytes(1023), "1023 B");
  EXPECT_EQ(review::format_bytes(64 * 1024), "64 KiB");
  EXPECT_EQ(review::format_bytes(1.5 * 1024 * 1024), "1.5 MiB");
  EXPECT_EQ(review::format_bytes(80.0 * (1ll << 30)), "80 GiB");
}

TEST(ReviewTables, OpTableShowsDashesForAnUntimedCaseAndEveryHeaderTheReviewNeeds) {
  CaseRecord skipped = make_case({.variant = "fused_v9", .disposition = Disposition::skipped});
  skipped.timing.reset();
  skipped.derived.reset();
  skipped.verify.reset();
  skipped.reason = "cols % 8 != 0";
  const auto m = review::build_review_model(test::sample_run(), {make_case({.median_us = 12.5}), skipped});
  const review::Table t = review::op_table(m.groups.at(0));
  for (const char* h : {"variant", "dtype", "shape", "median us", "GB/s", "TFLOP/s", "% of roofline",
                        "% of DRAM roof", "speedup", "disposition", "verification"})
    EXPECT_NE(std::find(t.headers.begin(), t.headers.end(), h), t.headers.end()) << h;
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0][3], "12.50");
  EXPECT_EQ(t.rows[1][3], "-");
  EXPECT_EQ(t.rows[1][4], "-");
  EXPECT_EQ(t.rows[1][9], "skipped: cols % 8 != 0");
  EXPECT_EQ(t.rows[1][10], "not verified");
  for (const auto& row : t.rows) EXPECT_EQ(row.size(), t.headers.size());
}

TEST(ReviewTables, CeilingsTablePutsMeasuredBesideDatasheetWithTheMethod) {
  const auto m = review::build_review_model(test::sample_run(), {});
  const review::Table t = review::ceilings_table(m);
  ASSERT_FALSE(t.rows.empty());
  EXPECT_EQ(t.rows[0][1], "3000.0 GB/s");
  EXPECT_NE(t.rows[0][2].find("cudaMemcpyAsync 2048MiB clean"), std::string::npos);
  EXPECT_EQ(t.rows[0][3], "3350.0 GB/s");
  bool bf16 = false;
  for (const auto& row : t.rows)
    if (row[0] == "bf16 tensor core") bf16 = row[1] == "700.0 TFLOP/s" && row[3] == "989.0 TFLOP/s";
  EXPECT_TRUE(bf16);
}

TEST(ReviewTables, TitleNamesEveryGpuOfARunSpreadOverSeveral) {
  RunInfo run = test::sample_run();
  std::map<std::string, std::string> facts;
  for (const auto& [k, v] : review::title_facts(review::build_review_model(run, {}))) facts[k] = v;
  EXPECT_TRUE(facts.contains("GPU"));
  EXPECT_FALSE(facts.contains("GPUs"));
  for (int i : {0, 1}) {
    DeviceInfo d = *run.device;
    d.index = i;
    d.uuid = "GPU-" + std::to_string(i);
    run.devices.push_back(d);
  }
  facts.clear();
  for (const auto& [k, v] : review::title_facts(review::build_review_model(run, {}))) facts[k] = v;
  EXPECT_EQ(facts["GPUs"], "2 x " + run.device->name + " (0 GPU-0, 1 GPU-1), one worker each");
}

TEST(ReviewTables, EnvironmentNamesDriverCudaCuptiAndTheSettings) {
  const auto m = review::build_review_model(test::sample_run(), {});
  std::map<std::string, std::string> env;
  for (const auto& row : review::environment_table(m).rows) env[row[0]] = row[1];
  EXPECT_EQ(env["driver"], "580.1, CUDA driver API 13.0");
  EXPECT_EQ(env["CUDA runtime"], "13.0");
  EXPECT_EQ(env["CUPTI"], "130001");
  EXPECT_EQ(env["flush"], "dirty");
  EXPECT_EQ(env["timer"], "cupti");
}

}  // namespace
}  // namespace kwb
