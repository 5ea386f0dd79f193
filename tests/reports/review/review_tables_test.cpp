// The review tables: units formatted once, untimed cases shown as dashes, both ceiling sources.
#include <gtest/gtest.h>

#include <algorithm>

#include "reports/review/review_tables.hpp"
#include "tests/reports/review/review_test_support.hpp"

namespace kwb {
namespace {

using test::make_case;

// The cell of `row` under the first header named `column`.
std::string table_cell(const review::Table& t, std::size_t row, const std::string& column) {
  const auto it = std::find(t.headers.begin(), t.headers.end(), column);
  if (it == t.headers.end()) {
    ADD_FAILURE() << "no column " << column;
    return "";
  }
  return t.rows.at(row).at(static_cast<std::size_t>(it - t.headers.begin()));
}

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
  for (const char* h : {"variant", "math", "uses", "dtype", "shape", "median us", "GB/s", "TFLOP/s",
                        "% of roofline", "% of DRAM roof", "speedup", "disposition", "verification"})
    EXPECT_NE(std::find(t.headers.begin(), t.headers.end(), h), t.headers.end()) << h;
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(table_cell(t, 0, "median us"), "12.50");
  EXPECT_EQ(table_cell(t, 1, "median us"), "-");
  EXPECT_EQ(table_cell(t, 1, "GB/s"), "-");
  EXPECT_EQ(table_cell(t, 1, "disposition"), "skipped: cols % 8 != 0");
  EXPECT_EQ(table_cell(t, 1, "verification"), "not verified");
  for (const auto& row : t.rows) EXPECT_EQ(row.size(), t.headers.size());
}

TEST(ReviewTables, OpTableSaysWhatRanEachCaseAndWhenItsSpeedupSetsOtherMathAgainstTheBaseline) {
  CaseRecord base = make_case({.variant = "baseline_cublas", .role = Role::baseline, .median_us = 80});
  base.math = "fp32";
  base.uses = {"cuBLASLt"};
  CaseRecord tf32 = make_case({.variant = "fused_v3_tf32", .median_us = 10});
  tf32.math = "tf32";
  tf32.derived->speedup_vs_baseline = 8.0;
  tf32.derived->baseline_math = "fp32";
  CaseRecord fp32 = make_case({.variant = "fused_v2_smem", .median_us = 100});
  fp32.math = "fp32";
  fp32.derived->speedup_vs_baseline = 0.8;
  fp32.derived->baseline_math = "fp32";
  CaseRecord old = make_case({.variant = "from_an_older_report", .median_us = 40});  // no labels
  old.derived->speedup_vs_baseline = 2.0;
  const auto m = review::build_review_model(test::sample_run(), {base, tf32, fp32, old});
  const review::Table t = review::op_table(m.groups.at(0));
  ASSERT_EQ(t.rows.size(), 4u);
  EXPECT_EQ(table_cell(t, 0, "math"), "fp32");
  EXPECT_EQ(table_cell(t, 0, "uses"), "cuBLASLt");
  EXPECT_EQ(table_cell(t, 1, "math"), "tf32");
  EXPECT_EQ(table_cell(t, 1, "uses"), "-");
  EXPECT_EQ(table_cell(t, 1, "speedup"), "8.00x (tf32 vs fp32)");
  EXPECT_EQ(table_cell(t, 2, "speedup"), "0.80x");
  EXPECT_EQ(table_cell(t, 3, "math"), "-");
  EXPECT_EQ(table_cell(t, 3, "speedup"), "2.00x");
}

TEST(ReviewTables, SpeedupTableNamesBothSidesMathAndLibrariesAndFollowsOtherMathWithLikeForLike) {
  CaseRecord base = make_case({.variant = "baseline_cublas", .role = Role::baseline, .median_us = 80});
  base.math = "fp32";
  base.uses = {"cuBLASLt"};
  CaseRecord tf32 = make_case({.variant = "fused_v3_tf32", .median_us = 10});
  tf32.math = "tf32";
  CaseRecord fp32 = make_case({.variant = "fused_v2_smem", .median_us = 100});
  fp32.math = "fp32";
  const auto m = review::build_review_model(test::sample_run(), {base, tf32, fp32});
  const review::Table t = review::speedup_table(m);
  ASSERT_EQ(t.rows.size(), 2u);
  for (const auto& row : t.rows) EXPECT_EQ(row.size(), t.headers.size());
  // The headers repeat ("math", "us"): find the columns by position around the variant names.
  const auto at = [&](std::size_t row, std::size_t col) { return t.rows[row].at(col); };
  const std::size_t baseline = std::find(t.headers.begin(), t.headers.end(), "baseline") - t.headers.begin();
  const std::size_t best = std::find(t.headers.begin(), t.headers.end(), "best fused") - t.headers.begin();
  EXPECT_EQ(t.headers.at(baseline + 1), "math");
  EXPECT_EQ(t.headers.at(baseline + 2), "uses");
  EXPECT_EQ(t.headers.at(best + 1), "math");
  EXPECT_EQ(t.headers.at(best + 2), "uses");
  EXPECT_EQ(at(0, baseline + 1), "fp32");
  EXPECT_EQ(at(0, baseline + 2), "cuBLASLt");
  EXPECT_EQ(at(0, best), "fused_v3_tf32");
  EXPECT_EQ(at(0, best + 1), "tf32");
  EXPECT_EQ(at(0, best + 2), "-");
  EXPECT_EQ(t.rows[0].back(), "8.00x (tf32 vs fp32)");
  EXPECT_EQ(at(1, best), "fused_v2_smem");
  EXPECT_EQ(t.rows[1].back(), "0.80x");
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
