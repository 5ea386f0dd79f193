// The review report's view of hardware counters: each case with counters drawn on the roofline at
// its model point and its measured point, joined; a per-op counters table holding only the
// figures that were collected, with those beyond their thresholds highlighted; the measured
// roofline's flags among the findings; and none of it for a run without counters.
#include <gtest/gtest.h>

#include <regex>
#include <stdexcept>

#include <fmt/format.h>

#include "reports/review/review_charts.hpp"
#include "reports/review/review_html.hpp"
#include "reports/review/review_markdown.hpp"
#include "reports/review/review_model.hpp"
#include "reports/review/review_tables.hpp"
#include "tests/reports/review/review_test_support.hpp"

namespace kwb {
namespace {

using test::attach_counters;
using test::make_case;

std::size_t count(const std::string& s, const std::string& part) {
  std::size_t n = 0;
  for (auto p = s.find(part); p != std::string::npos; p = s.find(part, p + 1)) ++n;
  return n;
}

// rmsnorm_fwd: a baseline and fused_v2 at two widths, the fused ones with counters (one moving
// 1.37 times its model, with half of each load sector wasted); softmax_fwd with counters that
// match its model; swiglu_fwd without counters.
std::vector<CaseRecord> cases_with_counters() {
  std::vector<CaseRecord> cases;
  for (std::int64_t cols : {1024, 4096}) {
    cases.push_back(make_case({.op = "rmsnorm_fwd", .variant = "baseline_eager", .role = Role::baseline,
                               .rows = 8192, .cols = cols, .median_us = cols / 50.0}));
    cases.push_back(make_case({.op = "rmsnorm_fwd", .variant = "fused_v2", .rows = 8192, .cols = cols,
                               .median_us = cols / 200.0}));
  }
  attach_counters(cases[1], {.traffic_ratio = 1.37, .useful_bytes = 16, .kernels = 2});
  attach_counters(cases[3], {.traffic_ratio = 1.01});
  cases.push_back(make_case({.op = "softmax_fwd", .variant = "fused_v1", .intensity = 1.2}));
  attach_counters(cases.back(), {.traffic_ratio = 1.0, .l2_hit = 0.5});
  cases.push_back(make_case({.op = "swiglu_fwd", .variant = "fused_v1", .intensity = 0.3}));
  return cases;
}

// The text as read: table cells carry <wbr/> line-break hints inside names.
std::string without_breaks(std::string html) {
  for (std::size_t at; (at = html.find("<wbr/>")) != std::string::npos;) html.erase(at, 6);
  return html;
}

struct Mark {
  double cx = 0, cy = 0;
  bool found = false;
};

// The circle of `cls` ("pt" or "ring") whose tooltip starts with `title`.
Mark mark(const std::string& svg, const std::string& cls, const std::string& title) {
  static const std::regex circle(R"re(<circle class="(\w+)" cx="([-0-9.]+)" cy="([-0-9.]+)"[^>]*><title>([^<]*)</title>)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), circle); it != std::sregex_iterator(); ++it)
    if ((*it)[1] == cls && (*it)[4].str().rfind(title, 0) == 0) return {std::stod((*it)[2]), std::stod((*it)[3]), true};
  return {};
}

// The roofline point of the case named `name`, which must be there.
const review::RooflinePoint& point_of(const review::ReviewModel& model, const std::string& name) {
  for (const review::RooflinePoint& p : model.points)
    if (p.case_name == name) return p;
  throw std::runtime_error("no roofline point for " + name);
}

TEST(ReviewCounters, EachCaseWithCountersIsAtItsModelAndMeasuredPointsJoinedByALine) {
  // 1. Prepare the model and its roofline.
  const auto cases = cases_with_counters();
  const auto model = review::build_review_model(test::sample_run(), cases);
  const std::string svg = review::roofline_svg(model);
  // 2. The three cases with counters have a ring each, the others none.
  EXPECT_EQ(count(svg, "<circle class=\"ring\""), 3u);
  EXPECT_EQ(count(svg, "<circle class=\"pt\""), cases.size());
  // 3. The case moving 1.37x its model: ring at intensity / 1.37, same rate, left of its dot, and
  // a line between the two.
  const CaseRecord& heavy = cases[1];
  const Mark dot = mark(svg, "pt", heavy.nvtx_range + ":");
  const Mark ring = mark(svg, "ring", heavy.nvtx_range + ": measured");
  ASSERT_TRUE(dot.found && ring.found) << svg;
  EXPECT_DOUBLE_EQ(ring.cy, dot.cy);
  EXPECT_LT(ring.cx, dot.cx);
  EXPECT_NE(svg.find(fmt::format("points=\"{:.1f},{:.1f} {:.1f},{:.1f}\"", dot.cx, dot.cy, ring.cx, ring.cy)),
            std::string::npos)
      << "no line from the model point to the measured point";
  const review::RooflinePoint* point = &point_of(model, heavy.nvtx_range);
  ASSERT_TRUE(point->measured.has_value());
  EXPECT_NEAR(point->measured->intensity, heavy.derived->intensity / 1.37, 1e-12);
  // Its FLOPs were counted (as many as the model's): the join is solid, at the same rate.
  EXPECT_TRUE(point->measured->flops_measured);
  EXPECT_DOUBLE_EQ(point->measured->tflops, heavy.derived->tflops);
  EXPECT_TRUE(point->measured->flagged);
  EXPECT_NE(svg.find("flagged: moves 37% more DRAM traffic"), std::string::npos);
  EXPECT_NE(svg.find("traffic ratio 1.37"), std::string::npos);
  // 4. The legend says what the rings are.
  EXPECT_EQ(count(svg, "model -&gt; measured (counters)"), 1u);
}

TEST(ReviewCounters, WithoutFlopCountersTheModelsFlopsStandInAndTheJoinIsDashed) {
  // 1. Prepare: the 1.37x case with its FLOP counter removed, as the memory set alone records it.
  std::vector<CaseRecord> cases = cases_with_counters();
  CaseRecord& heavy = cases[1];
  for (KernelCounters& k : heavy.counters->kernels) k.values.erase("sm__sass_thread_inst_executed_op_ffma_pred_on.sum");
  heavy.counters->total = total_over_kernels(heavy.counters->kernels);
  derive_measured(heavy);
  ASSERT_FALSE(heavy.derived->measured->flops.has_value());
  // 2. Run.
  const auto model = review::build_review_model(test::sample_run(), cases);
  const std::string svg = review::roofline_svg(model);
  // 3. Verify: still drawn, at the model's FLOPs over the measured bytes and the model's rate.
  const review::RooflinePoint* point = &point_of(model, heavy.nvtx_range);
  ASSERT_TRUE(point->measured.has_value());
  EXPECT_FALSE(point->measured->flops_measured);
  EXPECT_NEAR(point->measured->intensity, heavy.derived->intensity / 1.37, 1e-12);
  EXPECT_DOUBLE_EQ(point->measured->tflops, heavy.derived->tflops);
  const Mark dot = mark(svg, "pt", heavy.nvtx_range + ":");
  const Mark ring = mark(svg, "ring", heavy.nvtx_range + ": measured");
  ASSERT_TRUE(dot.found && ring.found);
  const auto join = svg.find(fmt::format("points=\"{:.1f},{:.1f} {:.1f},{:.1f}\"", dot.cx, dot.cy, ring.cx, ring.cy));
  ASSERT_NE(join, std::string::npos);
  const auto line = svg.rfind("<polyline", join);
  EXPECT_NE(svg.substr(line, join - line).find("stroke-dasharray"), std::string::npos)
      << "the join of a point without FLOP counters is dashed";
  EXPECT_NE(svg.find("the model&#39;s FLOPs: none counted"), std::string::npos);
}

TEST(ReviewCounters, HtmlHasAPerOpCountersTableWithOnlyTheCollectedFigures) {
  const std::string html = without_breaks(review_html(review::build_review_model(test::sample_run(), cases_with_counters())));
  const auto section = html.find("<h2 id=\"counters\">Hardware counters per op</h2>");
  ASSERT_NE(section, std::string::npos);
  const std::string counters = html.substr(section, html.find("<h2", section + 1) - section);
  // One table per op with counters, none for swiglu_fwd.
  EXPECT_NE(counters.find("<h3 id=\"counters-rmsnorm_fwd\">"), std::string::npos);
  EXPECT_NE(counters.find("<h3 id=\"counters-softmax_fwd\">"), std::string::npos);
  EXPECT_EQ(counters.find("swiglu_fwd"), std::string::npos);
  EXPECT_EQ(count(counters, "<table>"), 2u);
  // The collected figures are columns; those of sets not collected (tensor) are not.
  for (const char* header : {"variant", "kernels", "DRAM read", "DRAM written", "traffic ratio", "L2 hit rate",
                             "L1 hit rate (global loads)", "sectors per load request",
                             "useful bytes per load sector (B/sector)", "issue active", "achieved occupancy",
                             "theoretical occupancy", "waves", "registers (per thread)"})
    EXPECT_NE(counters.find("<th>" + std::string(header) + "</th>"), std::string::npos) << header;
  for (const char* absent : {"tensor pipe active", "sectors per store request", "useful bytes per store sector"})
    EXPECT_EQ(counters.find(absent), std::string::npos) << absent;
  // The 1.37x case's figures, highlighted where beyond their thresholds; its registers are the
  // most of its two kernels.
  EXPECT_NE(counters.find("<td class=\"num flag\">1.37x</td>"), std::string::npos);
  EXPECT_NE(counters.find("<td class=\"num flag\">16.00</td>"), std::string::npos);
  EXPECT_NE(counters.find("<td class=\"num\">1.01x</td>"), std::string::npos);
  EXPECT_NE(counters.find("<td class=\"num\">25.0%</td>"), std::string::npos);  // L2 hit rate
  EXPECT_NE(counters.find("<td class=\"num\">60.0%</td>"), std::string::npos);  // achieved occupancy
  EXPECT_NE(counters.find("<td class=\"num\">48</td>"), std::string::npos);
  EXPECT_NE(counters.find("Beyond the usual thresholds"), std::string::npos);
  EXPECT_NE(counters.find("moves 37% more DRAM traffic than the work model"), std::string::npos);
  // How they were taken, and what the columns mean.
  EXPECT_NE(counters.find("sets: memory, compute, occupancy; 3 replay pass(es) per case"), std::string::npos);
  EXPECT_NE(counters.find("L2 hit rate: L2 sector lookups that hit"), std::string::npos);
  EXPECT_EQ(test::tag_balance_problem(html), "");
}

TEST(ReviewCounters, TheMeasuredRooflineFlagsAreAmongTheFindings) {
  const auto model = review::build_review_model(test::sample_run(), cases_with_counters());
  std::vector<review::Finding> measured;
  for (const auto& f : model.findings)
    if (f.kind == "measured roofline") measured.push_back(f);
  ASSERT_EQ(measured.size(), 1u);
  EXPECT_EQ(measured[0].case_name, cases_with_counters()[1].nvtx_range);
  EXPECT_NE(measured[0].detail.find("moves 37% more DRAM traffic"), std::string::npos);
  const std::string html = without_breaks(review_html(model));
  const auto findings = html.find("id=\"findings\"");
  EXPECT_NE(html.find("<td>measured roofline</td>", findings), std::string::npos);
}

TEST(ReviewCounters, ARunWithoutCountersShowsNone) {
  std::vector<CaseRecord> cases = cases_with_counters();
  for (CaseRecord& c : cases) {
    c.counters.reset();
    c.derived->measured.reset();
  }
  const auto model = review::build_review_model(test::sample_run(), cases);
  EXPECT_TRUE(model.counters.empty());
  for (const auto& p : model.points) EXPECT_FALSE(p.measured.has_value());
  const std::string html = review_html(model);
  EXPECT_EQ(html.find("id=\"counters\""), std::string::npos);
  EXPECT_EQ(html.find("class=\"ring\""), std::string::npos);
  EXPECT_EQ(html.find("measured (counters)"), std::string::npos);
  EXPECT_EQ(html.find("measured roofline"), std::string::npos);
  const std::string md = review_markdown(model);
  EXPECT_EQ(md.find("Hardware counters"), std::string::npos);
}

TEST(ReviewCounters, CountersThatCouldNotBeReadAreSaidOnceWithoutATable) {
  std::vector<CaseRecord> cases = {make_case({.variant = "fused_v1"}), make_case({.variant = "fused_v2"})};
  for (CaseRecord& c : cases) {
    CaseCounters k;
    k.source = "cupti";
    k.sets = {"memory"};
    k.unavailable = "ERR_NVGPUCTRPERM: no permission to read GPU counters";
    c.counters = k;
  }
  const auto model = review::build_review_model(test::sample_run(), cases);
  EXPECT_TRUE(model.counters.empty());
  EXPECT_EQ(model.counter_summary.cases_asked, 2);
  EXPECT_EQ(model.counter_summary.cases_read, 0);
  const std::string html = review_html(model);
  EXPECT_NE(html.find("id=\"counters\""), std::string::npos);
  EXPECT_NE(html.find("No counters for 2 case(s): ERR_NVGPUCTRPERM: no permission to read GPU counters."),
            std::string::npos);
  EXPECT_EQ(html.find("<h3 id=\"counters-"), std::string::npos);
}

TEST(ReviewCounters, ACaseImportedFromNsightComputeShowsItsSourceAndDashesForWhatItLacks) {
  std::vector<CaseRecord> cases = cases_with_counters();
  CaseRecord& imported = cases[3];
  imported.counters.reset();
  imported.derived->measured.reset();
  CaseCounters ncu;
  ncu.source = "ncu";
  KernelCounters k;
  k.name = "rmsnorm_kernel";
  k.values = {{"lts__t_sectors_lookup_hit.sum", 1}, {"lts__t_sectors_lookup_miss.sum", 3}};
  ncu.kernels = {k};
  ncu.total = total_over_kernels(ncu.kernels);
  imported.ncu_counters = ncu;
  const auto model = review::build_review_model(test::sample_run(), cases);
  ASSERT_FALSE(model.counters.empty());
  const review::Table t = review::counters_table(model.counters[0]);
  const auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(t.headers.begin(), t.headers.end(), name) - t.headers.begin());
  };
  ASSERT_LT(column("source"), t.headers.size());
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0][column("source")], "kwb (CUPTI)");
  EXPECT_EQ(t.rows[1][column("source")], "Nsight Compute");
  EXPECT_EQ(t.rows[1][column("L2 hit rate")], "25.0%");
  EXPECT_EQ(t.rows[1][column("traffic ratio")], "-");
  EXPECT_EQ(t.rows[0][column("traffic ratio")], "1.37x");
}

TEST(ReviewCounters, MarkdownHasTheSameTablesWithFlaggedCellsMarked) {
  const std::string md = review_markdown(review::build_review_model(test::sample_run(), cases_with_counters()));
  for (const char* part : {"## Hardware counters per op", "### rmsnorm_fwd\n", "### softmax_fwd\n", "| traffic ratio |",
                           "| 1.37x ! |", "| 1.01x |", "Beyond the usual thresholds", "What the columns mean:",
                           "3 of them also at their measured intensity"})
    EXPECT_NE(md.find(part), std::string::npos) << part << "\n" << md;
}

}  // namespace
}  // namespace kwb
