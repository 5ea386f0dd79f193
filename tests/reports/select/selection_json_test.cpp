// The kwb.selection/1 JSON and the Markdown table, read back: every field a training stack loads,
// the nulls of a lone candidate, tunables as an object, and the review report's section agreeing
// with `kwb select`'s table.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "reports/review/review_model.hpp"
#include "harness/record/atomic_file.hpp"
#include "reports/review/review_markdown.hpp"
#include "reports/select/selection_json.hpp"
#include "reports/select/selection_markdown.hpp"
#include "tests/reports/select/select_test_support.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

using test::summary_case;

Report two_group_report() {
  Report r = test::empty_report();
  r.run.git_sha = "9622eca0abcd";
  CaseRecord tuned = summary_case("rmsnorm_fwd", "fused_v2", 16384, 100.0, 99.0, 101.0);
  tuned.tunables = {{"block", 256}};
  tuned.nvtx_range += ":block=256";
  r.cases = {summary_case("rmsnorm_fwd", "baseline_eager", 16384, 300.0, 298.0, 302.0, Role::baseline),
             tuned,
             summary_case("rmsnorm_fwd", "fused_v1", 16384, 120.0, 119.0, 121.0),
             summary_case("softmax_fwd", "online", 1024, 7.0, 6.9, 7.1)};
  return r;
}

TEST(SelectionJson, RoundTripHoldsEveryField) {
  const Report r = two_group_report();
  const auto selection = select::select_fastest(r.run, r.cases);
  test::TempDir dir;
  const auto path = dir / "sub" / "selection.json";
  write_selection_json(path, selection, selection_source(r.run, "results/report.json", 0.01));
  const auto j = nlohmann::json::parse(read_text_file(path));

  EXPECT_EQ(j.at("schema"), "kwb.selection/1");
  EXPECT_EQ(j.at("device"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(j.at("driver"), "580.95.05");
  EXPECT_EQ(j.at("source_report"), "results/report.json");
  EXPECT_EQ(j.at("git_sha"), "9622eca0abcd");
  ASSERT_EQ(j.at("entries").size(), 2u);

  const auto& e = j.at("entries")[0];
  EXPECT_EQ(e.at("op"), "rmsnorm_fwd");
  EXPECT_EQ(e.at("dtype"), "bf16");
  EXPECT_EQ(e.at("mode"), "cold");
  EXPECT_EQ(e.at("shape").at("rows"), 16384);
  EXPECT_EQ(e.at("shape").at("cols"), 4096);
  EXPECT_EQ(e.at("shape_compact"), "16384x4096");
  EXPECT_EQ(e.at("winner").at("variant"), "fused_v2");
  EXPECT_EQ(e.at("winner").at("tunables").at("block"), 256);
  EXPECT_DOUBLE_EQ(e.at("winner").at("median_us").get<double>(), 100.0);
  EXPECT_EQ(e.at("winner").at("case"), "rmsnorm_fwd:fused_v2:bf16:16384x4096:block=256");
  EXPECT_EQ(e.at("runner_up").at("variant"), "fused_v1");
  EXPECT_TRUE(e.at("runner_up").at("tunables").empty());
  EXPECT_NEAR(e.at("margin_pct").get<double>(), 20.0, 1e-9);
  EXPECT_EQ(e.at("clear"), true);
  EXPECT_DOUBLE_EQ(e.at("baseline_us").get<double>(), 300.0);
  EXPECT_DOUBLE_EQ(e.at("speedup_vs_baseline").get<double>(), 3.0);
  EXPECT_EQ(e.at("candidates"), 3);

  const auto& lone = j.at("entries")[1];
  EXPECT_EQ(lone.at("op"), "softmax_fwd");
  EXPECT_TRUE(lone.at("runner_up").is_null());
  EXPECT_TRUE(lone.at("margin_pct").is_null());
  EXPECT_TRUE(lone.at("baseline_us").is_null());
  EXPECT_TRUE(lone.at("speedup_vs_baseline").is_null());
  EXPECT_EQ(lone.at("candidates"), 1);
  // No catalogue was asked (the default settings): nothing is known of run-to-run bits.
  EXPECT_EQ(j.at("deterministic_only"), false);
  EXPECT_TRUE(e.at("winner").at("varies_run_to_run").is_null());
}

// With the catalogue's answers, the winner and runner-up carry them; the source says whether the
// table was filtered.
TEST(SelectionJson, CandidatesSayWhetherTheyVaryRunToRun) {
  const Report r = two_group_report();
  select::SelectSettings settings;
  settings.varies_run_to_run = [](const std::string&, const std::string& variant) -> std::optional<bool> {
    return variant == "fused_v1";
  };
  const auto selection = select::select_fastest(r.run, r.cases, settings);
  SelectionSource source = selection_source(r.run, "results/report.json", 0.01);
  source.deterministic_only = true;
  const auto j = selection_to_json(selection, source);
  EXPECT_EQ(j.at("deterministic_only"), true);
  const auto& e = j.at("entries")[0];
  EXPECT_EQ(e.at("winner").at("variant"), "fused_v2");
  EXPECT_EQ(e.at("winner").at("varies_run_to_run"), false);
  EXPECT_EQ(e.at("runner_up").at("variant"), "fused_v1");
  EXPECT_EQ(e.at("runner_up").at("varies_run_to_run"), true);
}

TEST(SelectionJson, SameReportGivesTheSameBytes) {
  const Report r = two_group_report();
  const auto source = selection_source(r.run, "r.json", 0.01);
  EXPECT_EQ(selection_to_json(select::select_fastest(r.run, r.cases), source).dump(),
            selection_to_json(select::select_fastest(r.run, r.cases), source).dump());
}

TEST(SelectionMarkdown, TableNamesWinnerWithConfigurationAndVerdict) {
  const Report r = two_group_report();
  const auto selection = select::select_fastest(r.run, r.cases);
  const std::string md = selection_markdown(selection, selection_source(r.run, "r.json", 0.01));
  EXPECT_NE(md.find("| rmsnorm_fwd | bf16 | 16384x4096 | fused_v2[block=256] | 100.00 | fused_v1 | 120.00 | 20.0% | clear | 3.00x |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("rmsnorm_fwd: fused_v2 wins 1 of 1 shape(s)"), std::string::npos) << md;
  EXPECT_NE(md.find("p10-p90"), std::string::npos) << "the note says which noise rule applied";
}

TEST(SelectionMarkdown, ReviewReportShowsTheSameSection) {
  const Report r = two_group_report();
  const auto model = review::build_review_model(r.run, r.cases);
  const std::string review = review_markdown(model);
  const std::string section = selection_section_markdown(select::select_fastest(r.run, r.cases));
  const auto at = review.find("## Fastest variant per shape\n\n");
  ASSERT_NE(at, std::string::npos) << review;
  EXPECT_EQ(review.substr(at + std::string("## Fastest variant per shape\n\n").size(), section.size()), section);
}

}  // namespace
}  // namespace kwb
