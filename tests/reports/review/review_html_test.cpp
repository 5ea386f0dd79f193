// The HTML review: one roofline with a point per timed case, labelled ceilings, every op's table,
// no scripts or external resources, hostile names escaped, well-formed throughout.
#include <gtest/gtest.h>

#include <regex>

#include "reports/review/review_model.hpp"
#include "reports/review/review_html.hpp"
#include "tests/reports/review/review_test_support.hpp"

namespace kwb {
namespace review_html_test {
namespace {

using test::make_case;

std::size_t count(const std::string& s, const std::string& part) {
  std::size_t n = 0;
  for (auto p = s.find(part); p != std::string::npos; p = s.find(part, p + 1)) ++n;
  return n;
}

std::vector<CaseRecord> three_op_cases() {
  std::vector<CaseRecord> cases;
  for (std::int64_t cols : {1024, 4096, 16384}) {
    cases.push_back(make_case({.op = "rmsnorm_fwd", .variant = "baseline_eager", .role = Role::baseline,
                               .rows = 8192, .cols = cols, .median_us = cols / 50.0}));
    cases.push_back(make_case({.op = "rmsnorm_fwd", .variant = "fused_v2", .rows = 8192, .cols = cols,
                               .median_us = cols / 200.0}));
  }
  cases.push_back(make_case({.op = "softmax_fwd", .variant = "fused_v1", .intensity = 1.2}));
  cases.push_back(make_case({.op = "swiglu_fwd", .variant = "fused_v1", .intensity = 0.3}));
  return cases;
}

TEST(ReviewHtml, HasOneRooflineWithAPointPerTimedCaseAndTooltips) {
  const auto cases = three_op_cases();
  const std::string html = review_html(review::build_review_model(test::sample_run(), cases));
  // The roofline is the first <svg>; count its circles only.
  const auto start = html.find("<svg"), end = html.find("</svg>", start);
  ASSERT_NE(start, std::string::npos);
  const std::string roofline = html.substr(start, end - start);
  EXPECT_NE(roofline.find("aria-label=\"Roofline"), std::string::npos);
  EXPECT_EQ(count(roofline, "<circle class=\"pt\""), cases.size());
  for (const auto& c : cases) EXPECT_NE(roofline.find("<title>" + c.nvtx_range + ":"), std::string::npos) << c.nvtx_range;
  EXPECT_EQ(count(html, "aria-label=\"Roofline"), 1u);
}

TEST(ReviewHtml, LabelsMeasuredAndDatasheetCeilingsAndDashesTheDatasheetOnes) {
  const std::string html = review_html(review::build_review_model(test::sample_run(), three_op_cases()));
  for (const char* label : {"DRAM copy 3000 GB/s (datasheet 3350)", "L2 copy 6700 GB/s",
                            "fp32 FFMA 64.0 TFLOP/s (datasheet 67.0)", "bf16 tensor 700 TFLOP/s (datasheet 989)"})
    EXPECT_NE(html.find(label), std::string::npos) << label;
  EXPECT_GE(count(html, "stroke=\"#808080\" stroke-width=\"2\" stroke-dasharray"), 3u);
}

TEST(ReviewHtml, HasEveryOpTableTheSpeedupsAndASweepChart) {
  const std::string html = review_html(review::build_review_model(test::sample_run(), three_op_cases()));
  for (const char* op : {"rmsnorm_fwd", "softmax_fwd", "swiglu_fwd"})
    EXPECT_NE(html.find("<h3 id=\"op-" + std::string(op) + "\">"), std::string::npos) << op;
  EXPECT_NE(html.find("<th>% of roofline</th>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">4.00x</td>"), std::string::npos);  // baseline 4x slower
  EXPECT_NE(html.find("aria-label=\"rmsnorm_fwd fp32 cold: GB/s against cols\""), std::string::npos);
  EXPECT_EQ(count(html, "<svg"), 2u);  // roofline + one sweep
}

TEST(ReviewHtml, IsSelfContainedWellFormedAndPrintable) {
  const std::string html = review_html(review::build_review_model(test::sample_run(), three_op_cases()));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_FALSE(std::regex_search(html, std::regex(R"((src|href)=\"(https?:|//))")));
  EXPECT_NE(html.find("@media print"), std::string::npos);
  EXPECT_NE(html.find("size: A4"), std::string::npos);
  EXPECT_EQ(test::tag_balance_problem(html), "");
}

TEST(ReviewHtml, EscapesHostileNamesFromTheReport) {
  auto cases = three_op_cases();
  CaseRecord evil = make_case({.op = "<script>op", .variant = "v</td><img src=x onerror=alert(1)>"});
  evil.nvtx_range = "<b>\"'&";
  cases.push_back(evil);
  RunInfo run = test::sample_run();
  run.command_line = "kwb run --note '</dd><script>'";
  const std::string html = review_html(review::build_review_model(run, cases));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;op"), std::string::npos);
  EXPECT_EQ(test::tag_balance_problem(html), "");
}

TEST(ReviewHtml, ListsFailuresAndWarnings) {
  auto cases = three_op_cases();
  cases.push_back(make_case({.variant = "broken_v3", .disposition = Disposition::failed}));
  // The text as read: table cells carry <wbr/> line-break hints inside names.
  std::string html = review_html(review::build_review_model(test::sample_run(), cases));
  for (std::size_t at; (at = html.find("<wbr/>")) != std::string::npos;) html.erase(at, 6);
  const auto findings = html.find("id=\"findings\"");
  ASSERT_NE(findings, std::string::npos);
  EXPECT_NE(html.find("broken_v3", findings), std::string::npos);
  EXPECT_NE(html.find("3 mismatches, first at y[7]", findings), std::string::npos);
  EXPECT_NE(html.find("class=\"summary bad\""), std::string::npos);
}

}  // namespace
}  // namespace review_html_test
}  // namespace kwb
