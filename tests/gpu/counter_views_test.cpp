// A real `kwb run --counters ... --columns ...` of rmsnorm_fwd beyond the L2: the results table
// ends with the chosen columns, filled from the cases' counters; the fused streaming kernel moves
// what its work model says (traffic ratio near 1, every fetched byte used), the 8-launch eager
// baseline moves several times that and is flagged; and the review report of the run draws the
// measured points and holds the counters table.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

#include "harness/derive/counter_figures.hpp"
#include "harness/record/json_report.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace kwb {
namespace {

const CaseRecord* find(const Report& r, const std::string& variant) {
  for (const CaseRecord& c : r.cases)
    if (c.variant == variant) return &c;
  return nullptr;
}

std::optional<double> figure(const CaseRecord& c, const std::string& id) {
  const auto figures = case_figures(c);
  const CounterFigure* f = find_figure(figures, id);
  return f ? std::optional<double>(f->value) : std::nullopt;
}

TEST(CounterViews, ARealRunShowsTheChosenColumnsAndTheReviewDrawsTheMeasuredPoints) {
  KWB_REQUIRE_GPU();
  // 1. Prepare and run: 16384 x 4096 bf16 (128 MiB in, 128 MiB out: beyond any L2), the eager
  // baseline and the fused vectorised kernel.
  const test::TempDir dir;
  const std::string columns = "traffic_ratio,l2_hit_rate,ld_bytes_per_sector,achieved_occupancy,dram__bytes_read.sum";
  const auto run = test::run_command(
      test::shell_quote(KWB_CLI_PATH) +
      " run --op rmsnorm_fwd --variant baseline_eager_8_launches,fused_v2_vec16 --dtype bf16 --axis rows=16384"
      " --axis cols=4096 --preset quick --datasheet-ceilings --counters memory,compute,occupancy --columns " +
      columns + " --out " + test::shell_quote(dir.path().string()));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const Report report = read_report_json(dir.path() / "report.json");
  const CaseRecord* fused = find(report, "fused_v2_vec16");
  const CaseRecord* baseline = find(report, "baseline_eager_8_launches");
  ASSERT_TRUE(fused && baseline) << run.output;
  ASSERT_TRUE(fused->counters.has_value()) << run.output;
  if (!fused->counters->unavailable.empty()) GTEST_SKIP() << "counters unavailable: " << fused->counters->unavailable;

  // 2. The figures: the fused kernel moves its model's bytes and uses every byte it fetches; the
  // baseline's intermediates go through DRAM.
  const auto fused_traffic = figure(*fused, "traffic_ratio");
  ASSERT_TRUE(fused_traffic.has_value());
  EXPECT_GT(*fused_traffic, 0.97);
  EXPECT_LT(*fused_traffic, 1.10);
  const auto useful = figure(*fused, "ld_bytes_per_sector");
  ASSERT_TRUE(useful.has_value());
  EXPECT_GE(*useful, 30.0) << "16-byte coalesced loads use each 32-byte sector whole";
  const auto baseline_traffic = figure(*baseline, "traffic_ratio");
  ASSERT_TRUE(baseline_traffic.has_value());
  EXPECT_GT(*baseline_traffic, 1.5);
  ASSERT_TRUE(baseline->derived && baseline->derived->measured);
  EXPECT_FALSE(baseline->derived->measured->flags.empty());
  ASSERT_TRUE(baseline->timing);
  EXPECT_EQ(figure(*baseline, "kernels"), static_cast<double>(baseline->timing->kernels_per_sample));

  // 3. The console table: the columns after the speedup, in the order given, the fused row with
  // its traffic ratio as the figure prints it.
  std::istringstream lines(run.output);
  std::string header, fused_row;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("median_us") != std::string::npos && line.find("speedup") != std::string::npos) header = line;
    if (!header.empty() && fused_row.empty() && line.rfind("rmsnorm_fwd", 0) == 0 &&
        line.find(" fused_v2_vec16 ") != std::string::npos)
      fused_row = line;
  }
  ASSERT_FALSE(header.empty()) << run.output;
  std::size_t at = header.find("speedup");
  std::stringstream names(columns);
  for (std::string name; std::getline(names, name, ',');) {
    const auto next = header.find(name, at);
    EXPECT_NE(next, std::string::npos) << name << " in " << header;
    at = next;
  }
  CounterFigure traffic;
  traffic.id = "traffic_ratio";
  traffic.unit = "x";
  traffic.value = *fused_traffic;
  EXPECT_NE(fused_row.find(figure_value_text(traffic)), std::string::npos) << fused_row;

  // 4. The review report of the run.
  const auto html = dir / "review.html";
  const auto review = test::run_command(test::shell_quote(KWB_CLI_PATH) + " report " +
                                        test::shell_quote((dir / "report.json").string()) + " --html " +
                                        test::shell_quote(html.string()));
  ASSERT_EQ(review.exit_code, 0) << review.output;
  std::ifstream in(html);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("<h2 id=\"counters\">Hardware counters per op</h2>"), std::string::npos);
  EXPECT_NE(page.find("<circle class=\"ring\""), std::string::npos) << "no measured point on the roofline";
  EXPECT_NE(page.find("<td>measured roofline</td>"), std::string::npos) << "the baseline's flag is not listed";
}

}  // namespace
}  // namespace kwb
