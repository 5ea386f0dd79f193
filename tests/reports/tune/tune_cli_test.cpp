// `kwb tune` without a GPU: what it plans (every combination of the variant's declared tunables, or
// the values --axis gives), and the refusals: no tunables, unknown names, a bad --top.
#include <gtest/gtest.h>

#include <fstream>

#include "harness/catalogue/case_identity.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/plan/planner.hpp"
#include "harness/record/journal.hpp"
#include "harness/worker/case_runner.hpp"
#include "tests/support/report_test_support.hpp"
#include "tests/support/command.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

using test::run_command;
using test::shell_quote;

test::CommandResult tune(const std::string& args) { return run_command(shell_quote(KWB_CLI_PATH) + " tune " + args); }

std::size_t lines_of(const std::string& text, const std::string& prefix) {
  std::size_t n = 0, at = 0;
  while ((at = text.find("\n" + prefix, at)) != std::string::npos) ++n, ++at;
  return n + (text.rfind(prefix, 0) == 0);
}

TEST(TuneCli, PlansEveryCombinationOfTheDeclaredTunables) {
  const Variant* v = Registry::instance().find_variant("rmsnorm_bwd", "fused_v2_cp_async_row_groups");
  ASSERT_NE(v, nullptr);
  ASSERT_FALSE(v->tunables.empty());
  std::size_t combinations = 1;
  for (const Tunable& t : v->tunables) combinations *= t.values.size();
  const auto r = tune("--op rmsnorm_bwd --variant fused_v2_cp_async_row_groups --dtype bf16 --axis rows=16384 "
                      "--axis cols=4096 --list-cases 2>/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(lines_of(r.output, "rmsnorm_bwd:fused_v2_cp_async_row_groups:bf16:16384x4096:"), combinations) << r.output;
  // A tunable named with --axis keeps the values given; the others still span every value.
  const auto narrowed = tune("--op rmsnorm_bwd --variant fused_v2_cp_async_row_groups --dtype bf16 --axis rows=16384 "
                             "--axis cols=4096 --axis stages=2 --list-cases 2>/dev/null");
  std::size_t stages_values = 0;
  for (const Tunable& t : v->tunables)
    if (t.name == "stages") stages_values = t.values.size();
  ASSERT_GT(stages_values, 1u);
  EXPECT_EQ(lines_of(narrowed.output, "rmsnorm_bwd:"), combinations / stages_values) << narrowed.output;
}

TEST(TuneCli, RefusesAVariantWithoutTunablesUnknownNamesAndABadTop) {
  auto r = tune("--op rmsnorm_fwd --variant fused_v2_vec16");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("declares no tunables"), std::string::npos) << r.output;
  r = tune("--op rmsnorm_bwd --variant fused_v2_cp_async_row_group");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("did you mean 'fused_v2_cp_async_row_groups'"), std::string::npos) << r.output;
  r = tune("--op rmsnorm_bwx --variant fused_v2_cp_async_row_groups");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("unknown op 'rmsnorm_bwx'"), std::string::npos) << r.output;
  r = tune("--op rmsnorm_bwd --variant fused_v2_cp_async_row_groups --top 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--top"), std::string::npos) << r.output;
}

// The search runs through the run verb's code, but its messages name the verb the user typed.
TEST(TuneCli, BadSettingsAreNamedAsTuneErrorsNotRunErrors) {
  for (const char* bad : {"--axis rows=abc", "--preset bogus", "--dtype fp8", "--out /proc/kwb-tune"}) {
    const auto r = tune(std::string("--op rmsnorm_bwd --variant fused_v2_cp_async_row_groups ") + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("kwb tune: "), std::string::npos) << bad << ": " << r.output;
    EXPECT_EQ(r.output.find("kwb run:"), std::string::npos) << bad << ": " << r.output;
  }
}

TEST(TuneCli, WithoutAGpuSaysSoAndWritesNoSummary) {
  test::TempDir dir;
  const auto out = dir / "t";
  const auto r = tune("--op rmsnorm_bwd --variant fused_v2_cp_async_row_groups --dtype bf16 --axis rows=64 "
                      "--axis cols=4096 --out " + shell_quote(out.string()));
  if (r.exit_code == 0) GTEST_SKIP() << "a GPU is present: this test is for machines without one";
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("no usable CUDA GPU"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out / "tune.json"));
}

// A search's journal that holds every configuration (as an interrupted `kwb tune` leaves it once
// resumed to the end): --resume needs no GPU then, and writes tune.json from it.
TEST(TuneCli, ResumeOfACompleteJournalWritesTheSummaryWithoutAGpu) {
  test::TempDir dir;
  const auto out = dir / "search";
  const std::vector<std::string> axes = {"rows=64", "cols=4096", "vectors_per_thread=1,2", "cta_threads=512",
                                         "stages=2,3"};
  PlanRequest req;
  req.ops = {"rmsnorm_bwd"};
  req.variants = {"fused_v2_cp_async_row_groups"};
  req.dtypes = {DType::bf16};
  for (const auto& a : axes) req.axes.push_back(parse_axis_for(a, Registry::instance()));
  const auto cases = plan_cases(req, Registry::instance());
  ASSERT_EQ(cases.size(), 4u);
  JournalHeader header;
  header.plan_flags = {{"op", {"rmsnorm_bwd"}}, {"variant", {"fused_v2_cp_async_row_groups"}}, {"axis", axes},
                       {"dtype", {"bf16"}}};
  header.run = test::rich_report().run;
  for (const auto& c : cases) header.plan.push_back(case_identity(c));
  {
    Journal journal(out / "journal.jsonl");
    journal.write_header(header);
    double us = 40;
    for (const auto& c : cases) {
      CaseRecord rec = record_for(c);
      rec.disposition = Disposition::passed;
      rec.timing = TimingResult{};
      rec.timing->span.median = us;
      rec.timing->span.count = 20;
      us -= 5;  // the last configuration planned is the fastest
      journal.append(rec);
    }
  }
  const auto r = tune("--resume " + shell_quote(out.string()) + " --top 2");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(std::filesystem::exists(out / "tune.json")) << r.output;
  const auto j = nlohmann::json::parse(std::ifstream(out / "tune.json"));
  EXPECT_EQ(j["variant"], "fused_v2_cp_async_row_groups");
  ASSERT_EQ(j["shapes"].size(), 1u);
  EXPECT_EQ(j["shapes"][0]["configurations"].size(), 4u);
  EXPECT_EQ(j["shapes"][0]["top"].size(), 2u);
  EXPECT_EQ(j["shapes"][0]["best"]["median_us"], 25.0);
  EXPECT_EQ(j["shapes"][0]["best"]["case"], case_identity(cases.back()));
  // Plan flags beside --resume are refused: the journal has them.
  EXPECT_EQ(tune("--resume " + shell_quote(out.string()) + " --op rmsnorm_bwd").exit_code, 2);
}

}  // namespace
}  // namespace kwb
