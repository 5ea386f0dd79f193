// gui/model/case_table: rows, badges, filters, sort (unmeasured last) and CSV.
#include "gui/model/case_table.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "harness/record/json_report.hpp"

namespace kwb::gui {
namespace {

CaseRecord timed_case(const std::string& op, const std::string& variant, double median_us,
                      double speedup) {
  CaseRecord c;
  c.op = op;
  c.variant = variant;
  c.dtype = DType::bf16;
  c.disposition = Disposition::passed;
  c.verify = VerifyResult{};
  c.timing = TimingResult{};
  c.timing->span.median = median_us;
  c.derived = Derived{};
  c.derived->bandwidth_gbps = 1000 / median_us;
  if (speedup > 0) c.derived->speedup_vs_baseline = speedup;
  return c;
}

TEST(GuiCaseTable, RowOfASkippedCaseHasNoFigures) {
  CaseRecord c;
  c.op = "rmsnorm_fwd";
  c.variant = "naive";
  c.disposition = Disposition::skipped;
  c.reason = "needs sm_100";
  const TableRow r = make_row({0, 0}, "a", c);
  EXPECT_TRUE(std::isnan(r.time_us));
  EXPECT_TRUE(std::isnan(r.speedup));
  EXPECT_NE(r.search_text.find("needs sm_100"), std::string::npos);
}

TEST(GuiCaseTable, BadgesNameHotThrottledNoisyUnverified) {
  CaseRecord c = timed_case("op", "v", 10, 0);
  c.verify.reset();
  c.timing->mode = Mode::hot;
  c.timing->stop_reason = StopReason::time_limit;
  c.timing->clocks = ClockSummary{};
  c.timing->clocks->throttled_samples = 3;
  EXPECT_EQ(badges_of(c).text(), "hot,throttled,noisy,unverified");
  EXPECT_FALSE(badges_of(timed_case("op", "v", 10, 0)).any());
}

TEST(GuiCaseTable, FiltersMatchExactFieldsAndAnyText) {
  const TableRow r = make_row({0, 0}, "a", timed_case("rmsnorm_fwd", "fused_v2", 10, 2));
  EXPECT_TRUE(Filters{}.matches(r));
  EXPECT_TRUE((Filters{"rmsnorm_fwd", "", "bf16", ""}.matches(r)));
  EXPECT_FALSE((Filters{"softmax_fwd", "", "", ""}.matches(r)));
  EXPECT_TRUE((Filters{"", "", "", "FUSED_V2"}.matches(r)));
  EXPECT_FALSE((Filters{"", "", "fp32", ""}.matches(r)));
}

TEST(GuiCaseTable, SortBySpeedupPutsUnmeasuredLastBothWays) {
  std::vector<TableRow> rows = {make_row({0, 0}, "a", timed_case("op", "a", 10, 1.5)),
                                make_row({0, 1}, "a", timed_case("op", "b", 10, 0)),  // no baseline
                                make_row({0, 2}, "a", timed_case("op", "c", 10, 3.0))};
  std::vector<int> order = {0, 1, 2};
  sort_rows(order, rows, Column::speedup, false);
  EXPECT_EQ(order, (std::vector<int>{2, 0, 1}));
  sort_rows(order, rows, Column::speedup, true);
  EXPECT_EQ(order, (std::vector<int>{0, 2, 1}));
  sort_rows(order, rows, Column::variant, false);
  EXPECT_EQ(order, (std::vector<int>{2, 1, 0}));
}

TEST(GuiCaseTable, CsvQuotesFieldsAndLeavesUnmeasuredEmpty) {
  TableRow r = make_row({0, 0}, "a,b", timed_case("op", "v", 4, 0));
  const std::string csv = rows_to_csv({&r});
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "report,op,variant,math,uses,dtype,shape,mode,disposition,time_us,gbps,tflops,pct_of_roofline,"
            "speedup,speedup_math,badges");
  EXPECT_NE(csv.find("\"a,b\",op,v,,,bf16,,cold,passed,4,250,0,0,,,\n"), std::string::npos) << csv;
}

TEST(GuiCaseTable, TheTableShowsTheLabelledShapeSearchFindsItAndCsvKeepsTheIdentitysForm) {
  CaseRecord c = timed_case("qk_norm_fwd", "v", 4, 0);
  c.shape = Shape{{{"tokens", 16384}, {"heads", 32}, {"kv_heads", 8}, {"head_dim", 128}}};
  c.shape_label = "t16384 h32/8 d128";
  TableRow r = make_row({0, 0}, "a", c);
  EXPECT_EQ(r.shape, "t16384 h32/8 d128");
  EXPECT_NE(r.search_text.find("h32/8"), std::string::npos) << "what the table shows can be searched";
  const std::string csv = rows_to_csv({&r});
  EXPECT_NE(csv.find(",16384x32x8x128,"), std::string::npos) << csv;
  c.shape_label.clear();  // a report without labels: the compact form
  EXPECT_EQ(make_row({0, 0}, "a", c).shape, "16384x32x8x128");
}

TEST(GuiCaseTable, RowSaysWhatRanTheCaseAndWhenItsSpeedupSetsOtherMathAgainstTheBaseline) {
  CaseRecord c = timed_case("linear_bias_relu", "fused_v3_tf32", 10, 8.0);
  c.math = "tf32";
  c.derived->baseline_math = "fp32";
  CaseRecord lib = timed_case("linear_bias_relu", "baseline_cublas", 80, 1.0);
  lib.math = "bf16, fp32 acc";
  lib.uses = {"cuBLASLt"};
  lib.derived->baseline_math = "bf16, fp32 acc";
  const TableRow r = make_row({0, 0}, "a", c);
  const TableRow l = make_row({0, 1}, "a", lib);
  EXPECT_EQ(r.math, "tf32");
  EXPECT_EQ(r.uses, "");
  EXPECT_EQ(l.uses, "cuBLASLt");
  EXPECT_EQ(speedup_text(r), "8.00x (tf32 vs fp32)");
  EXPECT_EQ(speedup_text(l), "1.00x");
  EXPECT_EQ(speedup_text(make_row({0, 2}, "a", timed_case("op", "v", 10, 0))), "-");
  // The columns exist by name, sort as text, and the free-text filter finds a library.
  EXPECT_STREQ(column_name(Column::math), "math");
  EXPECT_STREQ(column_name(Column::uses), "uses");
  std::vector<TableRow> rows = {r, l};
  std::vector<int> order = {0, 1};
  sort_rows(order, rows, Column::math, true);
  EXPECT_EQ(order, (std::vector<int>{1, 0}));  // "bf16, ..." before "tf32"
  sort_rows(order, rows, Column::uses, false);
  EXPECT_EQ(order, (std::vector<int>{1, 0}));
  Filters f;
  f.text = "cublaslt";
  EXPECT_TRUE(f.matches(l));
  EXPECT_FALSE(f.matches(r));
  // The CSV carries both and the comparison, quoted where it holds a comma.
  const std::string csv = rows_to_csv({&r, &l});
  EXPECT_NE(csv.find(",fused_v3_tf32,tf32,,bf16,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",8,tf32 vs fp32,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",baseline_cublas,\"bf16, fp32 acc\",cuBLASLt,"), std::string::npos) << csv;
}

}  // namespace
}  // namespace kwb::gui

namespace kwb::gui {
namespace {

// A report with Python variants (samples/h100-python-variants: a Triton kernel and torch.compile
// beside the catalogue's CUDA ones, measured on an H100): the app's rows show them as any variant,
// with their time, their verdict and what they use.
TEST(GuiCaseTable, PythonVariantsOfARealReportAreRowsLikeAnyOther) {
  const Report report = read_report_json(KWB_SOURCE_DIR "/samples/h100-python-variants/report.json");
  int python_rows = 0;
  for (std::size_t i = 0; i < report.cases.size(); ++i) {
    const TableRow r = make_row({0, i}, "python", report.cases[i]);
    if (r.uses.find("Python") == std::string::npos) continue;
    ++python_rows;
    EXPECT_TRUE(r.variant == "triton_rmsnorm" || r.variant == "torch_compile_rmsnorm") << r.variant;
    EXPECT_EQ(r.disposition, "passed") << r.variant << " " << r.shape;
    EXPECT_GT(r.time_us, 0) << r.variant << " " << r.shape;
    // The app's search finds them by what they use.
    EXPECT_TRUE((Filters{"", "", "", r.variant == "triton_rmsnorm" ? "Triton" : "torch.compile"}.matches(r)));
  }
  EXPECT_EQ(python_rows, 40);  // 2 variants x 10 shapes x 2 dtypes
}

}  // namespace
}  // namespace kwb::gui
