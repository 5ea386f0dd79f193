// The CSV report has unit-bearing columns, one row per case, RFC 4180 quoting, and cells that
// parse back to the exact values; parse_csv reads it back and reports malformed input by line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "harness/record/csv_report.hpp"
#include "tests/support/report_test_support.hpp"

namespace kwb {
namespace {

using test::bare_report;
using test::rich_report;
using test::TempDir;
using Rows = std::vector<std::vector<std::string>>;

// Cell of `row` under header `column`; fails the test when the column does not exist.
std::string cell(const Rows& rows, std::size_t row, const std::string& column) {
  const auto& header = rows.at(0);
  auto it = std::find(header.begin(), header.end(), column);
  if (it == header.end()) {
    ADD_FAILURE() << "no column " << column;
    return "";
  }
  return rows.at(row).at(static_cast<std::size_t>(it - header.begin()));
}

double parse_double(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  EXPECT_EQ(*end, '\0') << "trailing text in " << text;
  return v;
}

TEST(CsvReport, HeaderHasUnitBearingNamesInOrder) {
  const Rows rows = parse_csv(to_csv(rich_report()));
  const std::vector<std::string> expected = {
      "index", "op", "variant", "role", "uses", "math", "dtype", "shape", "axis_rows", "axis_cols", "mode",
      "disposition", "reason", "flush", "timer", "preset", "samples", "time_median_us", "time_p10_us",
      "time_p90_us", "time_min_us", "time_max_us", "time_mean_us", "time_stdev_us",
      "noise_rel_iqr", "busy_median_us", "kernel_sum_median_us", "kernels_per_sample",
      "workspace_bytes", "device_memory_bytes", "stop_reason", "sm_clock_min_mhz", "sm_clock_max_mhz", "sm_clock_mean_mhz", "throttled_samples", "model_bytes", "model_flops", "executed_bytes", "executed_flops", "bandwidth_gbps", "tflops",
      "intensity_flop_per_byte", "bound", "roofline_tflops", "pct_of_roofline",
      "pct_of_bandwidth_ceiling", "pct_of_l2_ceiling", "speedup_vs_baseline", "baseline_variant", "baseline_math", "verify_passed",
      "max_abs_err", "max_rel_err", "rel_l2_err", "mismatches", "unwritten", "rows_checked",
      "rows_total", "nvtx_range", "repro", "measured_dram_bytes", "traffic_ratio", "measured_flops", "flop_ratio",
      "launch", "launch_overhead_us"};
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0], expected);
}

TEST(CsvReport, MeasuredRooflineColumnsHoldTheCountersFiguresAndAreEmptyWithoutThem) {
  // 1. Prepare: a case whose counters read its DRAM bytes and FLOPs, one whose counters read only
  // FLOPs, one without counters.
  Report report = rich_report();
  report.cases.push_back(report.cases[0]);
  CaseRecord& both = report.cases[0];
  both.counters = CaseCounters{};
  both.counters->total = {{"dram__bytes_read.sum", 3e8}, {"dram__bytes_write.sum", 1.0 / 3.0}};
  both.derived->measured = MeasuredWork{3e8 + 1.0 / 3.0, 1.0 / 7.0, 6.02e11, 0.1 + 0.2, 2006.6, {"moves 37% more"}};
  CaseRecord& flops_only = report.cases[1];
  flops_only.counters = CaseCounters{};
  flops_only.counters->total = {{"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 5e8}};
  flops_only.derived->measured = MeasuredWork{0, 0, 1e9, 2.0, std::nullopt, {}};
  report.cases[2].counters.reset();
  report.cases[2].derived->measured.reset();
  // 2. Run.
  const Rows rows = parse_csv(to_csv(report));
  // 3. Verify: exact doubles back; empty cells where not measured, never a 0.
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(parse_double(cell(rows, 1, "measured_dram_bytes")), 3e8 + 1.0 / 3.0);
  EXPECT_EQ(parse_double(cell(rows, 1, "traffic_ratio")), 1.0 / 7.0);
  EXPECT_EQ(parse_double(cell(rows, 1, "measured_flops")), 6.02e11);
  EXPECT_EQ(parse_double(cell(rows, 1, "flop_ratio")), 0.1 + 0.2);
  EXPECT_EQ(cell(rows, 2, "measured_dram_bytes"), "");
  EXPECT_EQ(cell(rows, 2, "traffic_ratio"), "");
  EXPECT_EQ(cell(rows, 2, "measured_flops"), "1000000000");
  EXPECT_EQ(cell(rows, 2, "flop_ratio"), "2");
  for (const char* column : {"measured_dram_bytes", "traffic_ratio", "measured_flops", "flop_ratio"})
    EXPECT_EQ(cell(rows, 3, column), "") << column;
}

TEST(CsvReport, WhatRanACaseIsInItsOwnColumnsAndEmptyWhereNotRecorded) {
  Report report = rich_report();
  report.cases.push_back(bare_report().cases[0]);  // a report of a build before the labels
  const Rows rows = parse_csv(to_csv(report));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(cell(rows, 1, "uses"), "cuBLASLt+cuDNN");
  EXPECT_EQ(cell(rows, 1, "math"), "bf16, fp32 acc");  // quoted in the file: it holds a comma
  EXPECT_EQ(cell(rows, 1, "baseline_math"), "fp32");
  EXPECT_EQ(cell(rows, 3, "uses"), "");
  EXPECT_EQ(cell(rows, 3, "math"), "");
  EXPECT_EQ(cell(rows, 3, "baseline_math"), "");
}

TEST(CsvReport, OneRowPerCaseEachAsWideAsTheHeader) {
  Report report = rich_report();
  report.cases.push_back(bare_report().cases[0]);
  const Rows rows = parse_csv(to_csv(report));
  ASSERT_EQ(rows.size(), report.cases.size() + 1);
  for (const auto& row : rows) EXPECT_EQ(row.size(), rows[0].size());
  EXPECT_EQ(cell(rows, 1, "index"), "0");
  EXPECT_EQ(cell(rows, 2, "index"), "1");
  EXPECT_EQ(cell(rows, 3, "op"), "softmax");
}

TEST(CsvReport, AxisColumnsAreTheUnionInFirstSeenOrderAndEmptyWhereMissing) {
  Report report = rich_report();  // rows,cols then cols,rows
  report.cases.push_back(bare_report().cases[0]);  // cols only
  report.cases[2].shape = Shape{{{"k", 64}, {"rows", 8}}};
  const Rows rows = parse_csv(to_csv(report));
  const auto& header = rows[0];
  const auto first_axis = std::find(header.begin(), header.end(), "axis_rows") - header.begin();
  EXPECT_EQ(header[first_axis + 1], "axis_cols");
  EXPECT_EQ(header[first_axis + 2], "axis_k");
  EXPECT_EQ(header[first_axis + 3], "mode");
  EXPECT_EQ(cell(rows, 2, "axis_rows"), "4096");  // cols-then-rows case still lands right
  EXPECT_EQ(cell(rows, 2, "axis_cols"), "4100");
  EXPECT_EQ(cell(rows, 2, "axis_k"), "");
  EXPECT_EQ(cell(rows, 3, "axis_cols"), "");
  EXPECT_EQ(cell(rows, 3, "axis_k"), "64");
  EXPECT_EQ(cell(rows, 2, "shape"), "4100x4096");
}

TEST(CsvReport, ReproWithCommasQuotesAndNewlinesRoundTripsThroughParseCsv) {
  Report report = rich_report();
  report.cases[1].repro = "kwb run --axis \"rows=1,cols=2\"\n  --note 'it''s \"fine\"',\r\nend";
  report.cases[1].reason = "plain";
  const std::string csv = to_csv(report);
  EXPECT_NE(csv.find(R"("kwb run --axis ""rows=1,cols=2"")"), std::string::npos) << csv;
  const Rows rows = parse_csv(csv);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(cell(rows, 1, "repro"), report.cases[0].repro);
  EXPECT_EQ(cell(rows, 2, "repro"), report.cases[1].repro);
  EXPECT_EQ(cell(rows, 2, "reason"), "plain");
}

TEST(CsvReport, NumericCellsParseBackToTheSameDouble) {
  Report report = rich_report();
  report.cases[0].timing->span.median = 0.1 + 0.2;
  report.cases[0].timing->span.p10 = 1e-300;
  report.cases[0].derived->model_flops = 6.02e23;
  const Rows rows = parse_csv(to_csv(report));
  const CaseRecord& c = report.cases[0];
  EXPECT_EQ(parse_double(cell(rows, 1, "time_median_us")), 0.1 + 0.2);
  EXPECT_EQ(parse_double(cell(rows, 1, "time_p10_us")), 1e-300);
  EXPECT_EQ(parse_double(cell(rows, 1, "time_p90_us")), c.timing->span.p90);
  EXPECT_EQ(parse_double(cell(rows, 1, "time_stdev_us")), c.timing->span.stdev);
  EXPECT_EQ(parse_double(cell(rows, 1, "noise_rel_iqr")), c.timing->span.noise);
  EXPECT_EQ(parse_double(cell(rows, 1, "busy_median_us")), c.timing->busy.median);
  EXPECT_EQ(parse_double(cell(rows, 1, "model_flops")), 6.02e23);
  EXPECT_EQ(parse_double(cell(rows, 1, "intensity_flop_per_byte")), c.derived->intensity);
  EXPECT_EQ(parse_double(cell(rows, 1, "speedup_vs_baseline")), *c.derived->speedup_vs_baseline);
  EXPECT_EQ(parse_double(cell(rows, 1, "max_abs_err")), c.verify->max_abs_err);
  EXPECT_EQ(cell(rows, 1, "samples"), "137");
  EXPECT_EQ(cell(rows, 1, "mismatches"), "2");
  EXPECT_EQ(cell(rows, 1, "verify_passed"), "false");
  EXPECT_EQ(cell(rows, 1, "mode"), "hot");
  EXPECT_EQ(cell(rows, 1, "stop_reason"), "time_limit");
}

TEST(CsvReport, AbsentValuesAreEmptyCells) {
  Report report = bare_report();
  CaseRecord events_timed = test::rich_case(1, Shape{{{"cols", 7}}});
  events_timed.timing->timer = "cuda_events";
  events_timed.timing->kernels_per_sample = -1;  // events cannot count kernels
  events_timed.timing->busy = SummaryStats{};
  events_timed.timing->kernel_sum = SummaryStats{};
  events_timed.derived->speedup_vs_baseline.reset();
  report.cases.push_back(events_timed);
  const Rows rows = parse_csv(to_csv(report));

  for (const char* column : {"mode", "timer", "samples", "time_median_us", "busy_median_us",
                             "kernels_per_sample", "stop_reason", "bandwidth_gbps", "bound",
                             "speedup_vs_baseline", "verify_passed", "max_abs_err", "rows_total"})
    EXPECT_EQ(cell(rows, 1, column), "") << column;
  EXPECT_EQ(cell(rows, 1, "disposition"), "skipped");

  EXPECT_NE(cell(rows, 2, "time_median_us"), "");
  EXPECT_EQ(cell(rows, 2, "busy_median_us"), "");
  EXPECT_EQ(cell(rows, 2, "kernel_sum_median_us"), "");
  EXPECT_EQ(cell(rows, 2, "kernels_per_sample"), "");
  EXPECT_EQ(cell(rows, 2, "speedup_vs_baseline"), "");
  EXPECT_NE(cell(rows, 2, "tflops"), "");
}

TEST(CsvReport, WriteReportCsvWritesExactlyToCsv) {
  TempDir dir;
  const auto path = dir / "out/report.csv";
  const Report report = rich_report();
  write_report_csv(path, report);
  EXPECT_EQ(read_text_file(path), to_csv(report));
}

TEST(ParseCsv, AcceptsCrlfAndALastLineWithoutNewline) {
  EXPECT_EQ(parse_csv("a,b\r\n1,\"x\r\ny\"\r\n,3"),
            (Rows{{"a", "b"}, {"1", "x\r\ny"}, {"", "3"}}));
  EXPECT_EQ(parse_csv(""), Rows{});
  EXPECT_EQ(parse_csv("\"\""), (Rows{{""}}));
  EXPECT_EQ(parse_csv("a,\n"), (Rows{{"a", ""}}));
}

TEST(ParseCsv, UnterminatedQuoteNamesTheLineWhereItOpened) {
  try {
    parse_csv("a,b\n1,2\n3,\"never closed\nstill open\n");
    FAIL() << "expected ReportError";
  } catch (const ReportError& e) {
    EXPECT_STREQ(e.what(), "line 3: unterminated quoted field");
  }
}

TEST(ParseCsv, TextAfterAClosingQuoteIsRejected) {
  EXPECT_THROW(parse_csv("\"a\"b,c\n"), ReportError);
  EXPECT_THROW(parse_csv("ab\"c\n"), ReportError);
}

}  // namespace
}  // namespace kwb
