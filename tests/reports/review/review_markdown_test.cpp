// The Markdown review: the same sections and tables as the HTML one, cells that cannot break the
// table, and the sweeps in words.
#include <gtest/gtest.h>

#include <sstream>

#include "reports/review/review_model.hpp"
#include "reports/review/review_markdown.hpp"
#include "reports/review/review_tables.hpp"
#include "tests/reports/review/review_test_support.hpp"

namespace kwb {
namespace {

using test::make_case;

std::vector<CaseRecord> sweep_cases() {
  std::vector<CaseRecord> cases;
  for (std::int64_t cols : {1024, 4096, 16384}) {
    cases.push_back(make_case({.variant = "baseline_eager", .role = Role::baseline, .cols = cols, .median_us = 40}));
    cases.push_back(make_case({.variant = "fused_v2", .cols = cols, .median_us = 10}));
  }
  cases.push_back(make_case({.op = "softmax_fwd", .variant = "fused_v1"}));
  return cases;
}

TEST(ReviewMarkdown, HasTheSectionsTablesAndFacts) {
  const std::string md = review_markdown(review::build_review_model(test::sample_run(), sweep_cases()));
  for (const char* part : {"# Kernel Workbench review: NVIDIA H100 80GB HBM3", "- **Command**: `kwb run --op rmsnorm_fwd`",
                           "## Environment and settings", "| driver | 580.1, CUDA driver API 13.0 |",
                           "### Ceilings", "| DRAM copy (read+write) | 3000.0 GB/s |",
                           "## Speedups", "## Results per op", "### rmsnorm_fwd (memory-bound)",
                           "### softmax_fwd (memory-bound)", "## Sweeps", "## Failures and warnings"})
    EXPECT_NE(md.find(part), std::string::npos) << part << "\n" << md;
  EXPECT_EQ(md.find("<svg"), std::string::npos);
  EXPECT_EQ(md.find("<table"), std::string::npos);
}

TEST(ReviewMarkdown, SpeedupsExplainTheMathColumnsAndNameOtherMath) {
  auto cases = sweep_cases();
  for (auto& c : cases) c.math = c.role == Role::baseline ? "fp32" : "tf32";
  for (auto& c : cases)
    if (c.role != Role::baseline) {
      c.derived->speedup_vs_baseline = 4.0;
      c.derived->baseline_math = "fp32";
    }
  const std::string md = review_markdown(review::build_review_model(test::sample_run(), cases));
  EXPECT_NE(md.find(review::kSpeedupMathNote), std::string::npos);
  EXPECT_NE(md.find("| 4.00x (tf32 vs fp32) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| fused_v2 | tf32 | - |"), std::string::npos) << md;  // op table: variant, math, uses
}

TEST(ReviewMarkdown, EveryTableRowHasTheHeaderColumnCount) {
  auto cases = sweep_cases();
  cases.push_back(make_case({.variant = "pipe|in|name", .disposition = Disposition::failed}));
  const std::string md = review_markdown(review::build_review_model(test::sample_run(), cases));
  std::size_t columns = 0;
  std::istringstream lines(md);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("|")) { columns = 0; continue; }
    std::size_t bars = 0;
    for (std::size_t i = 0; i < line.size(); ++i) bars += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    if (columns == 0) columns = bars;
    EXPECT_EQ(bars, columns) << line;
  }
  EXPECT_NE(md.find("pipe\\|in\\|name"), std::string::npos);
}

TEST(ReviewMarkdown, DescribesEachSweepInWords) {
  const std::string md = review_markdown(review::build_review_model(test::sample_run(), sweep_cases()));
  ASSERT_NE(md.find("- rmsnorm_fwd fp32 cold, GB/s against cols (rows=4096):"), std::string::npos) << md;
  const auto line = md.substr(md.find("- rmsnorm_fwd fp32 cold"));
  const std::string sweep = line.substr(0, line.find('\n'));
  EXPECT_NE(sweep.find(" fused_v2 "), std::string::npos) << sweep;
  EXPECT_NE(sweep.find("at cols=16384"), std::string::npos) << sweep;  // rate grows with cols here
}

}  // namespace
}  // namespace kwb
