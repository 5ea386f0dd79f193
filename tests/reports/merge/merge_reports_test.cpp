// kwb merge, pure part: shard reports of a real plan, written and read back with the JSON
// writer, join into the unsharded case list; every refusal names the files.
#include "reports/merge/merge_reports.hpp"

#include <gtest/gtest.h>

#include <random>

#include "harness/plan/planner.hpp"
#include "harness/plan/shard.hpp"
#include "tests/reports/compare/compare_test_support.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

// A small real plan: two ops, their baselines and fused variants, default shapes.
std::vector<CaseRequest> small_plan() {
  PlanRequest r;
  r.ops = {"rmsnorm_fwd", "softmax_fwd"};
  r.dtypes = {DType::bf16};
  return plan_cases(r, Registry::instance());
}

// A timed, passed record of `c` whose median is seeded by its position.
CaseRecord record_of(const CaseRequest& c, std::mt19937_64& rng) {
  CaseRecord r = test::timed_case(c.op, c.variant, 1, test::noisy_samples(rng(), 20, 10.0 + c.index, 0.01));
  r.index = c.index;
  r.dtype = c.dtype;
  r.shape = c.shape;
  r.role = Registry::instance().find_variant(c.op, c.variant)->role;
  r.nvtx_range = case_identity(c);
  r.derived = Derived{};
  return r;
}

MergeOptions with_command_line(const std::string& line) {
  MergeOptions o;
  o.command_line = line;
  return o;
}

MergeOptions allow_mixed() {
  MergeOptions o;
  o.allow_mixed_devices = true;
  return o;
}

class MergeReports : public ::testing::Test {
 protected:
  void SetUp() override {
    plan_ = small_plan();
    ASSERT_GT(plan_.size(), 6u);
  }
  // Shard `i` of `n`, measured on `gpu`, written with the JSON writer and read back.
  ShardReport shard(int i, int n, const std::string& gpu = "NVIDIA H100 80GB HBM3") {
    Report r = test::empty_report(gpu);
    r.run.host = "node" + std::to_string(i);
    r.run.started_at = "2026-11-22T10:0" + std::to_string(i % 10) + ":00Z";
    r.run.finished_at = "2026-11-22T11:0" + std::to_string(i % 10) + ":00Z";
    r.run.shard = ShardInfo{i, n, static_cast<std::int64_t>(plan_.size()), plan_digest(plan_)};
    std::mt19937_64 rng(1234 + i);
    for (const auto& c : select_shard(plan_, {i, n})) r.cases.push_back(record_of(c, rng));
    const auto path = dir_ / ("shard" + std::to_string(i) + "of" + std::to_string(n) + ".json");
    write_report_json(path, r);
    return {path.string(), read_report_json(path)};
  }
  std::vector<ShardReport> all(int n) {
    std::vector<ShardReport> out;
    for (int i = n - 1; i >= 0; --i) out.push_back(shard(i, n));  // any order
    return out;
  }
  std::string refusal(const std::vector<ShardReport>& shards, MergeOptions options = {}) {
    try {
      merge_shard_reports(shards, options);
    } catch (const MergeError& e) {
      return e.what();
    }
    return "(merged)";
  }
  std::vector<CaseRequest> plan_;
  test::TempDir dir_;
};

TEST_F(MergeReports, JoinedShardsEqualTheUnshardedCaseListInPlanOrder) {
  for (int n : {1, 2, 3, 5, static_cast<int>(plan_.size()) + 2}) {
    std::vector<ShardReport> shards;
    for (int i = 0; i < std::min<int>(n, plan_.size()); ++i) shards.push_back(shard(i, n));
    const MergeResult m = merge_shard_reports(shards, with_command_line("kwb merge"));
    ASSERT_EQ(m.report.cases.size(), plan_.size()) << n;
    for (std::size_t k = 0; k < plan_.size(); ++k) {
      EXPECT_EQ(m.report.cases[k].nvtx_range, case_identity(plan_[k])) << n << " shards, position " << k;
      EXPECT_EQ(m.report.cases[k].index, static_cast<int>(k));
    }
    EXPECT_TRUE(m.missing_shards.empty()) << "shards past the plan's size hold nothing: " << n;
    EXPECT_TRUE(m.report.run.complete);
    EXPECT_FALSE(m.report.run.shard.has_value());
    ASSERT_TRUE(m.report.run.merged.has_value());
    EXPECT_EQ(m.report.run.merged->plan_digest, plan_digest(plan_));
    EXPECT_EQ(m.report.run.settings.at("cases_planned"), std::to_string(plan_.size()));
  }
}

TEST_F(MergeReports, RunInfoSpansEveryShardAndListsTheirHostsAndSpeedupsAreRederived) {
  const MergeResult m = merge_shard_reports(all(3), with_command_line("kwb merge --out x a b c"));
  const RunInfo& run = m.report.run;
  EXPECT_EQ(run.started_at, "2026-11-22T10:00:00Z");
  EXPECT_EQ(run.finished_at, "2026-11-22T11:02:00Z");
  EXPECT_EQ(run.command_line, "kwb merge --out x a b c");
  EXPECT_EQ(run.host, "node2") << "the first shard given";
  ASSERT_EQ(run.merged->shards.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(run.merged->shards[i].index, i) << "listed in shard order";
    EXPECT_EQ(run.merged->shards[i].host, "node" + std::to_string(i));
  }
  // Round-robin puts baselines and fused variants in different shards: speedups need all.
  int with_speedup = 0;
  for (const auto& c : m.report.cases) with_speedup += c.derived && c.derived->speedup_vs_baseline.has_value();
  EXPECT_EQ(with_speedup, static_cast<int>(m.report.cases.size()));
  // The merged report itself reads back (run.merged strictly).
  const auto path = dir_ / "merged.json";
  write_report_json(path, m.report);
  const Report back = read_report_json(path);
  ASSERT_TRUE(back.run.merged.has_value());
  EXPECT_EQ(back.run.merged->shards[1].host, "node1");
  EXPECT_EQ(back.run.merged->shard_count, 3);
}

TEST_F(MergeReports, MissingShardIsReportedAndMarksTheReportIncomplete) {
  auto shards = all(4);
  shards.erase(shards.begin() + 1);  // shard 2
  const MergeResult m = merge_shard_reports(shards, {});
  EXPECT_EQ(m.missing_shards, std::vector<int>{2});
  EXPECT_EQ(m.missing_shard_count, 1);
  EXPECT_FALSE(m.report.run.complete);
  EXPECT_EQ(m.report.run.merged->missing_shards, std::vector<int>{2});
  ASSERT_FALSE(m.warnings.empty());
  EXPECT_NE(m.warnings[0].find("2/4"), std::string::npos) << m.warnings[0];
}

// A shard count read from a file may be huge (2^31 - 1): the missing shards are counted, and
// only the first few listed, in bounded time and memory.
TEST_F(MergeReports, AHugeShardCountIsCountedNotListed) {
  std::vector<ShardReport> shards{shard(0, 3)};
  shards[0].report.run.shard->count = 2147483647;
  shards[0].report.run.shard->plan_cases = 2147483647;
  shards[0].report.cases.resize(1);  // plan position 0: shard 0 of any count
  const MergeResult m = merge_shard_reports(shards, {});
  EXPECT_EQ(m.missing_shard_count, 2147483646);
  EXPECT_EQ(m.missing_shards.size(), kListedMissingShards);
  EXPECT_EQ(m.missing_shards.front(), 1);
  EXPECT_FALSE(m.report.run.complete);
  EXPECT_EQ(m.report.run.settings.at("shards_missing"), "2147483646");
  ASSERT_FALSE(m.warnings.empty());
  EXPECT_NE(m.warnings[0].find("and 2147483626 more"), std::string::npos) << m.warnings[0];
}

TEST_F(MergeReports, InterruptedShardMarksTheReportIncomplete) {
  auto shards = all(2);
  shards[0].report.run.complete = false;
  EXPECT_FALSE(merge_shard_reports(shards, {}).report.run.complete);
}

TEST_F(MergeReports, RefusesOverlapTheSameShardTwiceAndCasesInTheWrongShard) {
  auto twice = all(3);
  twice.push_back(shard(1, 3));
  EXPECT_NE(refusal(twice).find("shard 1/3 is given twice"), std::string::npos) << refusal(twice);

  auto overlap = all(3);
  overlap[0].report.cases.push_back(overlap[1].report.cases[0]);  // shard 2 claims a case of shard 1
  const std::string why = refusal(overlap);
  EXPECT_NE(why.find(overlap[0].file), std::string::npos) << why;
  EXPECT_NE(why.find("belongs to shard 1/3"), std::string::npos) << why;

  auto dup = all(3);
  dup[0].report.cases.push_back(dup[0].report.cases[0]);
  EXPECT_NE(refusal(dup).find("overlap"), std::string::npos) << refusal(dup);
}

TEST_F(MergeReports, RefusesOtherPlansAndShardCounts) {
  auto digest = all(2);
  digest[1].report.run.shard->plan_digest = "0123456789abcdef";
  const std::string why = refusal(digest);
  EXPECT_NE(why.find("different plans"), std::string::npos) << why;
  EXPECT_NE(why.find(digest[0].file), std::string::npos) << why;
  EXPECT_NE(why.find(digest[1].file), std::string::npos) << why;

  std::vector<ShardReport> counts = {shard(0, 2), shard(1, 3)};
  EXPECT_NE(refusal(counts).find("same number of ways"), std::string::npos) << refusal(counts);

  auto unsharded = all(2);
  unsharded[1].report.run.shard.reset();
  EXPECT_NE(refusal(unsharded).find("is not a shard report"), std::string::npos);
  EXPECT_NE(refusal({}).find("no shard report"), std::string::npos);
}

TEST_F(MergeReports, RefusesDifferentSettingsAlways) {
  for (const std::string& key : kMergeSettings) {
    auto shards = all(2);
    shards[1].report.run.settings[key] = "something-else";
    const std::string why = refusal(shards, allow_mixed());
    EXPECT_NE(why.find("different " + key), std::string::npos) << why;
  }
}

// A shard written before the launch was recorded launched on the stream: it joins a stream shard,
// and a graph shard is refused beside either.
TEST_F(MergeReports, ShardsLaunchedDifferentlyAreRefusedAndAnUnrecordedLaunchIsStream) {
  auto shards = all(2);
  shards[0].report.run.settings.erase("launch");
  shards[1].report.run.settings["launch"] = "stream";
  EXPECT_EQ(refusal(shards), "(merged)");
  shards[1].report.run.settings["launch"] = "graph";
  const std::string why = refusal(shards);
  EXPECT_NE(why.find("different launch ("), std::string::npos) << why;
  EXPECT_NE(why.find("graph"), std::string::npos) << why;
}

TEST_F(MergeReports, MixedDevicesRefusedUnlessAllowed) {
  std::vector<ShardReport> shards = {shard(0, 2), shard(1, 2, "NVIDIA H200")};
  const std::string why = refusal(shards);
  EXPECT_NE(why.find("NVIDIA H200"), std::string::npos) << why;
  EXPECT_NE(why.find("--allow-mixed-devices"), std::string::npos) << why;
  const MergeResult m = merge_shard_reports(shards, allow_mixed());
  EXPECT_EQ(m.report.run.device->name, "NVIDIA H100 80GB HBM3") << "the first shard's";
  EXPECT_EQ(m.report.run.merged->shards[1].device_name, "NVIDIA H200");
  EXPECT_EQ(m.report.cases.size(), plan_.size());
}

TEST_F(MergeReports, DifferingCeilingsAreNotedAndTheFirstShardsKept) {
  auto shards = all(2);
  Ceilings c;
  c.source = "measured";
  c.dram_copy_gbps = 3000;
  shards[0].report.run.ceilings = c;
  c.dram_copy_gbps = 2900;
  shards[1].report.run.ceilings = c;
  const MergeResult m = merge_shard_reports(shards, {});
  EXPECT_TRUE(m.report.run.merged->ceilings_differ);
  EXPECT_EQ(m.report.run.ceilings->dram_copy_gbps, 3000);
  shards[1].report.run.ceilings = shards[0].report.run.ceilings;
  EXPECT_FALSE(merge_shard_reports(shards, {}).report.run.merged->ceilings_differ);
}

}  // namespace
}  // namespace kwb
