// The selection table's "vs baseline" cell says when the winner ran other math than the baseline
// (a tf32 winner against a full-fp32 baseline), and stays a bare ratio for like against like.
#include "reports/review/selection_tables.hpp"

#include <gtest/gtest.h>

#include "tests/reports/select/select_test_support.hpp"

namespace kwb {
namespace {

std::string vs_baseline(const review::Table& t, std::size_t row) {
  EXPECT_EQ(t.headers.back(), "vs baseline");
  return t.rows.at(row).back();
}

TEST(SelectionTables, VsBaselineNamesOtherMathAndNotLikeForLike) {
  // Prepare: two shapes, each with a baseline and a winner 4x faster; at 1024 rows the winner
  // runs tf32 against an fp32 baseline, at 2048 both run fp32.
  std::vector<CaseRecord> cases = {
      test::summary_case("linear_bias_relu", "baseline_cublas", 1024, 80, 79, 81, Role::baseline),
      test::summary_case("linear_bias_relu", "fused_v3_tf32", 1024, 20, 19, 21),
      test::summary_case("linear_bias_relu", "baseline_cublas", 2048, 80, 79, 81, Role::baseline),
      test::summary_case("linear_bias_relu", "fused_v2_smem", 2048, 20, 19, 21),
  };
  cases[0].math = cases[2].math = cases[3].math = "fp32";
  cases[1].math = "tf32";
  // Run.
  const review::Table t = review::selection_table(select::select_fastest(RunInfo{}, cases));
  // Verify.
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(vs_baseline(t, 0), "4.00x (tf32 vs fp32)");
  EXPECT_EQ(vs_baseline(t, 1), "4.00x");
}

}  // namespace
}  // namespace kwb
