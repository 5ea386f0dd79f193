// --shard: the grammar, round-robin selection over a real plan from the registry, and the digest.
#include "harness/plan/shard.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "harness/plan/planner.hpp"

namespace kwb {
namespace {

std::vector<CaseRequest> real_plan() {
  PlanRequest r;  // every op's default shapes: hundreds of cases of every op and size
  return plan_cases(r, Registry::instance());
}

std::vector<std::string> case_identities(const std::vector<CaseRequest>& cases) {
  std::vector<std::string> out;
  for (const auto& c : cases) out.push_back(case_identity(c));
  return out;
}

TEST(ParseShard, AcceptsZeroBasedSlices) {
  EXPECT_EQ(parse_shard("--shard", "0/1").index, 0);
  const ShardSpec s = parse_shard("--shard", "3/4");
  EXPECT_EQ(s.index, 3);
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(parse_shard("--shard", "99999/100000").count, 100000);
}

TEST(ParseShard, RefusesMalformedTextWithTheFlagAndAnExample) {
  for (const char* bad : {"", "1", "/4", "1/", "a/4", "1/b", "-1/4", "1/-4", "+1/4", " 1/4", "1/4 ", "1/4/5",
                          "1.0/4", "0/0", "1/100001", "99999999999999999999/3"}) {
    try {
      parse_shard("--shard", bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const PlanError& e) {
      const std::string what = e.what();
      EXPECT_TRUE(what.starts_with("--shard: ")) << what;
      EXPECT_NE(what.find("0/4"), std::string::npos) << "shows the form to use: " << what;
    }
  }
}

TEST(ParseShard, RefusesOneBasedIndexSayingShardsCountFromZero) {
  for (const char* one_based : {"4/4", "5/4", "1/1"}) {
    try {
      parse_shard("--shard", one_based);
      ADD_FAILURE() << "accepted '" << one_based << "'";
    } catch (const PlanError& e) {
      EXPECT_NE(std::string(e.what()).find("count from 0"), std::string::npos) << e.what();
    }
  }
}

// The union of N shards is the plan, each case once, for several N including 1 and more than
// the plan's size; shards are balanced and keep plan positions as indices.
TEST(SelectShard, UnionOfShardsIsThePlanForSeveralCounts) {
  const auto plan = real_plan();
  ASSERT_GT(plan.size(), 20u);
  std::mt19937 rng(20261122);
  std::vector<int> counts = {1, 2, 3, 7, static_cast<int>(plan.size()), static_cast<int>(plan.size()) + 5};
  for (int i = 0; i < 3; ++i) counts.push_back(std::uniform_int_distribution<int>(2, 64)(rng));
  for (int n : counts) {
    std::vector<const CaseRequest*> joined(plan.size(), nullptr);
    std::size_t smallest = plan.size(), largest = 0;
    for (int i = 0; i < n; ++i) {
      const auto shard = select_shard(plan, {i, n});
      smallest = std::min(smallest, shard.size());
      largest = std::max(largest, shard.size());
      for (std::size_t j = 0; j < shard.size(); ++j) {
        const auto k = static_cast<std::size_t>(shard[j].index);
        ASSERT_LT(k, plan.size());
        EXPECT_EQ(shard_of(k, n), i);
        EXPECT_EQ(k, static_cast<std::size_t>(i) + j * n) << "plan order within the shard";
        EXPECT_EQ(joined[k], nullptr) << "case " << k << " in two shards of " << n;
        joined[k] = &shard[j];
        EXPECT_EQ(case_identity(shard[j]), case_identity(plan[k]));
      }
    }
    for (std::size_t k = 0; k < plan.size(); ++k) EXPECT_NE(joined[k], nullptr) << "case " << k << " in no shard of " << n;
    EXPECT_LE(largest - smallest, 1u) << n << " shards are balanced";
  }
}

TEST(SelectShard, RoundRobinMixesOpsInEachShard) {
  const auto plan = real_plan();
  std::set<std::string> ops_in_plan, ops_in_shard;
  for (const auto& c : plan) ops_in_plan.insert(c.op);
  for (const auto& c : select_shard(plan, {1, 4})) ops_in_shard.insert(c.op);
  EXPECT_GT(ops_in_shard.size(), ops_in_plan.size() / 2) << "a contiguous block would hold one or two ops";
}

TEST(SelectShard, DeterministicAcrossPlannings) {
  const auto a = select_shard(real_plan(), {2, 5});
  const auto b = select_shard(real_plan(), {2, 5});
  EXPECT_EQ(case_identities(a), case_identities(b));
  EXPECT_TRUE(select_shard(real_plan(), {3, static_cast<int>(real_plan().size()) + 10}).empty() ==
              (real_plan().size() <= 3));
}

TEST(PlanDigest, StableHexOfIdentitiesInOrder) {
  EXPECT_EQ(plan_digest(std::vector<std::string>{}), "cbf29ce484222325") << "FNV-1a 64 offset basis";
  const auto plan = real_plan();
  const std::string d = plan_digest(plan);
  EXPECT_EQ(d.size(), 16u);
  EXPECT_EQ(d.find_first_not_of("0123456789abcdef"), std::string::npos) << d;
  EXPECT_EQ(plan_digest(real_plan()), d) << "same plan, same digest";
  auto swapped = case_identities(plan);
  std::swap(swapped[0], swapped[1]);
  EXPECT_NE(plan_digest(swapped), d) << "order counts";
  auto fewer = case_identities(plan);
  fewer.pop_back();
  EXPECT_NE(plan_digest(fewer), d);
  EXPECT_NE(plan_digest(std::vector<std::string>{"a", "bc"}), plan_digest(std::vector<std::string>{"ab", "c"}));
}

}  // namespace
}  // namespace kwb
