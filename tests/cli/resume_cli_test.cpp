// `kwb run --resume DIR` through the real binary, on the paths that need no GPU: a journal that
// holds every case (or --no-measure) gives the reports from the journal alone; different flags,
// a different plan, a garbled middle line, an older journal and a missing one are refused with
// exit 2 before any GPU work; an incomplete journal on a machine without a GPU exits 3.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/plan/planner.hpp"
#include "harness/session/resume_plan.hpp"
#include "harness/record/atomic_file.hpp"
#include "harness/record/journal.hpp"
#include "harness/record/json_report.hpp"
#include "harness/worker/case_runner.hpp"
#include "tests/support/report_test_support.hpp"
#include "harness/worker/measure/device_info.hpp"
#include "tests/support/command.hpp"
#include "tests/support/mentions.hpp"
#include "harness/plan/shard.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

using test::Mentions;
using test::shell_quote;

const std::string kPlanFlags = "--op rmsnorm_fwd --variant fused_v2_vec16 --dtype bf16 --axis rows=1,2,3 --axis cols=4096";

test::CommandResult kwb(const std::string& args) {
  return test::run_command(shell_quote(KWB_CLI_PATH) + " " + args + " 2>&1");
}

// A journal as `kwb run <kPlanFlags> --preset quick` writes it, holding the first `recorded`
// of its 3 cases; the plan is the binary's own (--list-cases).
struct JournalDir {
  test::TempDir dir;
  std::vector<std::string> plan;
  std::filesystem::path path() const { return dir / "out" / "journal.jsonl"; }
  std::string arg() const { return shell_quote((dir / "out").string()); }

  // `shard`: the journal of one shard ("1/2"), as `kwb run ... --shard 1/2` writes it.
  explicit JournalDir(std::size_t recorded, bool with_header = true, const std::string& shard = "") {
    const std::string shard_flag = shard.empty() ? "" : " --shard " + shard;
    const auto listed = test::run_command(shell_quote(KWB_CLI_PATH) + " run --list-cases --preset quick " + kPlanFlags +
                                          shard_flag + " 2>/dev/null");
    EXPECT_EQ(listed.exit_code, 0) << listed.output;
    std::istringstream lines(listed.output);
    for (std::string line; std::getline(lines, line);)
      if (!line.starts_with("kwb run:")) plan.push_back(line);  // the note on stderr
    PlanRequest req;
    req.ops = {"rmsnorm_fwd"};
    req.variants = {"fused_v2_vec16"};
    req.dtypes = {DType::bf16};
    req.axes = {parse_axis_assignment("rows=1,2,3"), parse_axis_assignment("cols=4096")};
    req.preset = "quick";
    auto cases = plan_cases(req, Registry::instance());
    if (!shard.empty()) cases = select_shard(cases, parse_shard("--shard", shard));
    JournalHeader header;
    header.plan_flags = {{"op", {"rmsnorm_fwd"}}, {"variant", {"fused_v2_vec16"}}, {"dtype", {"bf16"}},
                         {"axis", {"rows=1,2,3", "cols=4096"}}, {"preset", "quick"}};
    if (!shard.empty()) header.plan_flags["shard"] = shard;
    header.run = test::rich_report().run;
    for (const auto& c : cases) header.plan.push_back(case_identity(c));
    EXPECT_EQ(header.plan, plan) << "the library and the binary plan alike";
    Journal journal(path());
    if (with_header) journal.write_header(header);
    for (std::size_t i = 0; i < recorded; ++i) {
      CaseRecord rec = record_for(cases[i]);
      rec.disposition = Disposition::passed;
      journal.append(rec);
    }
  }
};

std::vector<std::string> reported(const std::filesystem::path& report_json) {
  std::vector<std::string> ids;
  for (const auto& r : read_report_json(report_json).cases) ids.push_back(record_identity(r));
  return ids;
}

TEST(ResumeCli, CompleteJournalGivesTheReportsWithoutAGpu) {
  JournalDir j(3);
  const auto r = kwb("run --resume " + j.arg());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(read_report_json(j.dir / "out" / "report.json").run.complete);
  EXPECT_EQ(reported(j.dir / "out" / "report.json"), j.plan);
  EXPECT_TRUE(std::filesystem::exists(j.dir / "out" / "report.csv"));
}

TEST(ResumeCli, AShardResumesItsOwnSliceNotTheWholePlan) {
  JournalDir j(2, true, "0/2");  // plan positions 0 and 2 of the 3 cases
  ASSERT_EQ(j.plan.size(), 2u);
  const auto r = kwb("run --resume " + j.arg());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(read_report_json(j.dir / "out" / "report.json").run.complete);
  EXPECT_EQ(reported(j.dir / "out" / "report.json"), j.plan);
  const auto other = kwb("run --resume " + j.arg() + " --shard 1/2");
  EXPECT_EQ(other.exit_code, 2) << other.output;
}

TEST(ResumeCli, NoMeasureWritesAnIncompleteReportFromTheJournalAlone) {
  JournalDir j(2);
  std::ofstream(j.path(), std::ios::app) << "{\"index\": 2, \"op\":";  // a kill mid-line
  const auto r = kwb("run --resume " + j.arg() + " --no-measure");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Mentions(r, "incomplete"));
  EXPECT_TRUE(Mentions(r, "skipped the last line"));
  const Report report = read_report_json(j.dir / "out" / "report.json");
  EXPECT_FALSE(report.run.complete);
  EXPECT_EQ(report.run.settings.at("cases_missing"), "1");
  EXPECT_EQ(reported(j.dir / "out" / "report.json"), (std::vector<std::string>{j.plan[0], j.plan[1]}));
}

TEST(ResumeCli, IncompleteJournalNeedsAGpuExit3) {
  if (cuda_device_count(nullptr) > 0)
    GTEST_SKIP() << "a GPU is present: the resume would measure";
  JournalDir j(1);
  const auto r = kwb("run --resume " + j.arg() + " --datasheet-ceilings");
  EXPECT_EQ(r.exit_code, 2) << "a flag the run did not have: " << r.output;
  const auto plain = kwb("run --resume " + j.arg());
  EXPECT_EQ(plain.exit_code, 3) << plain.output;
  EXPECT_TRUE(Mentions(plain, "no usable CUDA GPU"));
  EXPECT_EQ(read_journal(j.path()).size(), 1u) << "the journal is kept for a later resume";
}

TEST(ResumeCli, DifferentFlagsAreRefusedWithExit2) {
  JournalDir j(1);
  const auto r = kwb("run --resume " + j.arg() + " --preset precise");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "--preset \"precise\""));
  EXPECT_TRUE(Mentions(r, "\"quick\""));
  const auto same = kwb("run --resume " + j.arg() + " --preset quick --no-measure");
  EXPECT_EQ(same.exit_code, 0) << "the same flag again is fine: " << same.output;
}

TEST(ResumeCli, DifferentPlanIsRefusedWithExit2) {
  JournalDir j(1);
  std::string text = read_text_file(j.path());
  const auto pos = text.find("rows=1,2,3");
  ASSERT_NE(pos, std::string::npos);
  text.replace(pos, 10, "rows=1,2,4");  // the flags now plan another case than the recorded plan
  std::ofstream(j.path(), std::ios::trunc) << text;
  const auto r = kwb("run --resume " + j.arg());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "differs from the recorded one"));
}

TEST(ResumeCli, GarbledMiddleLineNamesFileAndLine) {
  JournalDir j(2);
  std::string text = read_text_file(j.path());
  const auto second = text.find('\n') + 1;  // line 2: the first record
  text.insert(second + 5, "#");
  std::ofstream(j.path(), std::ios::trunc) << text;
  const auto r = kwb("run --resume " + j.arg());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, j.path().string() + ":2"));
}

TEST(ResumeCli, OlderJournalAndMissingJournalAreRefused) {
  JournalDir old(2, /*with_header=*/false);
  const auto r = kwb("run --resume " + old.arg());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Mentions(r, "older kwb"));
  test::TempDir empty;
  const auto missing = kwb("run --resume " + shell_quote(empty.path().string()));
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_TRUE(Mentions(missing, "no journal"));
  const auto lone = kwb("run --no-measure");
  EXPECT_EQ(lone.exit_code, 2) << lone.output;
  const auto both = kwb("run --resume " + old.arg() + " --out elsewhere");
  EXPECT_EQ(both.exit_code, 2) << both.output;
}

}  // namespace
}  // namespace kwb
