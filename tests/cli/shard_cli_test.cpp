// `kwb run --shard` and `kwb merge` end to end with the real binary: the listed slices, the
// flag's errors, and merge's exit codes (0 merged, 1 shards missing, 2 refused).
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "harness/plan/planner.hpp"
#include "harness/plan/shard.hpp"
#include "harness/record/atomic_file.hpp"
#include "harness/record/json_report.hpp"
#include "tests/reports/compare/compare_test_support.hpp"
#include "tests/support/command.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace shard_cli_test {
namespace {

using test::CommandResult;
using test::shell_quote;

CommandResult kwb(const std::string& args) { return test::run_command(shell_quote(KWB_CLI_PATH) + " " + args); }
bool has(const CommandResult& r, const std::string& part) { return r.output.find(part) != std::string::npos; }

// The identities a --list-cases run prints (run_command joins stderr, whose note starts "kwb run:").
std::vector<std::string> listed(const std::string& args) {
  const std::string out = test::run_command(shell_quote(KWB_CLI_PATH) + " run --list-cases " + args).output;
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (!line.starts_with("kwb run:")) lines.push_back(line);
  return lines;
}

const std::string kSuite = shell_quote(std::string(KWB_SOURCE_DIR) + "/suites/smoke.yaml");

TEST(ShardCli, ListCasesOfOneShardIsEveryThirdCaseOfThePlan) {
  const auto plan = listed("--suite " + kSuite);
  ASSERT_GT(plan.size(), 3u);
  const auto one = listed("--suite " + kSuite + " --shard 1/3");
  std::vector<std::string> expected;
  for (std::size_t k = 1; k < plan.size(); k += 3) expected.push_back(plan[k]);
  EXPECT_EQ(one, expected);
  std::multiset<std::string> joined(one.begin(), one.end());
  for (const char* s : {"0/3", "2/3"})
    for (const auto& id : listed("--suite " + kSuite + " --shard " + s)) joined.insert(id);
  EXPECT_EQ(joined, std::multiset<std::string>(plan.begin(), plan.end()));
  const CommandResult r = kwb("run --list-cases --suite " + kSuite + " --shard 1/3");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r, "in shard 1/3 (of " + std::to_string(plan.size()) + " in the plan, digest ")) << r.output;
}

TEST(ShardCli, FlagsFromPlainFiltersShardToo) {
  const auto plan = listed("--op rmsnorm_fwd");
  EXPECT_EQ(listed("--op rmsnorm_fwd --shard 0/1"), plan);
  const auto last = listed("--op rmsnorm_fwd --shard " + std::to_string(plan.size() + 3) + "/" +
                           std::to_string(plan.size() + 4));
  EXPECT_TRUE(last.empty());
  const CommandResult r = kwb("run --op rmsnorm_fwd --shard " + std::to_string(plan.size()) + "/" +
                              std::to_string(plan.size() + 1) + " --out " + shell_quote("/nonexistent/x"));
  EXPECT_EQ(r.exit_code, 0) << "an empty shard is not an error: " << r.output;
  EXPECT_TRUE(has(r, "holds no case")) << r.output;
}

TEST(ShardCli, BadShardExitsTwoWithTheFlagAndForm) {
  for (const char* bad : {"4/4", "1", "x/4", "0/0", "-1/3"}) {
    const CommandResult r = kwb(std::string("run --list-cases --op rmsnorm_fwd --shard=") + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.output;
    EXPECT_TRUE(has(r, "--shard:")) << r.output;
  }
  EXPECT_TRUE(has(kwb("run --list-cases --shard 4/4"), "count from 0"));
}

class MergeCli : public ::testing::Test {
 protected:
  std::string write(int i, int n, const std::string& gpu = "NVIDIA H100 80GB HBM3", const std::string& digest = "") {
    PlanRequest req;
    req.ops = {"rmsnorm_fwd"};
    const auto plan = plan_cases(req, Registry::instance());
    Report r = test::empty_report(gpu);
    r.run.shard = ShardInfo{i, n, static_cast<std::int64_t>(plan.size()), digest.empty() ? plan_digest(plan) : digest};
    for (const auto& c : select_shard(plan, {i, n})) {
      CaseRecord rec = test::timed_case(c.op, c.variant, 1024, test::noisy_samples(c.index + 1, 10, 5.0, 0.01));
      rec.index = c.index;
      rec.nvtx_range = case_identity(c);
      r.cases.push_back(rec);
    }
    const auto path = dir_ / ("s" + std::to_string(i) + "_" + gpu.substr(7, 4) + digest + ".json");
    write_report_json(path, r);
    return shell_quote(path.string());
  }
  std::string out() { return shell_quote((dir_ / "merged").string()); }
  test::TempDir dir_;
};

TEST_F(MergeCli, MergesInPlanOrderAndExitsZero) {
  const CommandResult r = kwb("merge --out " + out() + " " + write(1, 2) + " " + write(0, 2));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Report m = read_report_json(dir_ / "merged" / "report.json");
  ASSERT_GT(m.cases.size(), 1u);
  for (std::size_t k = 0; k < m.cases.size(); ++k) EXPECT_EQ(m.cases[k].index, static_cast<int>(k));
  EXPECT_TRUE(m.run.complete);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "merged" / "report.csv"));
}

TEST_F(MergeCli, MissingShardExitsOneAndMarksIncomplete) {
  const CommandResult r = kwb("merge --out " + out() + " " + write(0, 3) + " " + write(2, 3));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r, "missing shard(s) 1/3")) << r.output;
  EXPECT_FALSE(read_report_json(dir_ / "merged" / "report.json").run.complete);
}

TEST_F(MergeCli, RefusalsExitTwoNamingTheFiles) {
  const CommandResult digest = kwb("merge --out " + out() + " " + write(0, 2) + " " + write(1, 2, "NVIDIA H100 80GB HBM3", "00000000deadbeef"));
  EXPECT_EQ(digest.exit_code, 2) << digest.output;
  EXPECT_TRUE(has(digest, "different plans")) << digest.output;
  EXPECT_TRUE(has(digest, "deadbeef.json")) << digest.output;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "merged" / "report.json")) << "nothing written when refused";

  const std::string a = write(0, 2), b = write(1, 2, "NVIDIA H200");
  const CommandResult mixed = kwb("merge --out " + out() + " " + a + " " + b);
  EXPECT_EQ(mixed.exit_code, 2) << mixed.output;
  EXPECT_TRUE(has(mixed, "--allow-mixed-devices")) << mixed.output;
  const CommandResult allowed = kwb("merge --allow-mixed-devices --out " + out() + " " + a + " " + b);
  EXPECT_EQ(allowed.exit_code, 0) << allowed.output;

  const CommandResult missing_file = kwb("merge --out " + out() + " " + shell_quote((dir_ / "nope.json").string()));
  EXPECT_EQ(missing_file.exit_code, 2) << missing_file.output;
  EXPECT_TRUE(has(missing_file, "nope.json")) << missing_file.output;
  EXPECT_EQ(kwb("merge " + a).exit_code, 2) << "--out is required";
}

}  // namespace
}  // namespace shard_cli_test
}  // namespace kwb
