// run.shard, run.merged, run.devices and a case's device in the report codec: round trip, optional
// on read, strict when present.
#include <gtest/gtest.h>

#include "harness/record/record_json.hpp"

namespace kwb {
namespace {

RunInfo sharded_run() {
  RunInfo r;
  r.tool_version = "0.1.0";
  r.shard = ShardInfo{2, 4, 41, "29d2ca6d1e5888cf"};
  MergeInfo m;
  m.shard_count = 4;
  m.plan_cases = 41;
  m.plan_digest = "29d2ca6d1e5888cf";
  m.missing_shards = {1};
  m.ceilings_differ = true;
  m.shards = {{0, "a.json", "node0", "NVIDIA H100 80GB HBM3", "GPU-1", "t0", "t1", 11}};
  r.merged = m;
  return r;
}

std::string error_of(const nlohmann::ordered_json& j) {
  try {
    run_info_from_json(j);
  } catch (const ReportError& e) {
    return e.what();
  }
  return "(read)";
}

TEST(ShardJson, RoundTripsShardAndMergeInfo) {
  const RunInfo back = run_info_from_json(to_json(sharded_run()));
  ASSERT_TRUE(back.shard.has_value());
  EXPECT_EQ(back.shard->index, 2);
  EXPECT_EQ(back.shard->count, 4);
  EXPECT_EQ(back.shard->plan_cases, 41);
  EXPECT_EQ(back.shard->plan_digest, "29d2ca6d1e5888cf");
  ASSERT_TRUE(back.merged.has_value());
  EXPECT_EQ(back.merged->missing_shards, std::vector<int>{1});
  EXPECT_TRUE(back.merged->ceilings_differ);
  ASSERT_EQ(back.merged->shards.size(), 1u);
  EXPECT_EQ(back.merged->shards[0].host, "node0");
  EXPECT_EQ(back.merged->shards[0].cases, 11);
}

TEST(ShardJson, OptionalOnReadStrictWhenPresent) {
  RunInfo plain;
  EXPECT_FALSE(run_info_from_json(to_json(plain)).shard.has_value()) << "older reports have no run.shard";
  auto j = to_json(sharded_run());
  j["shard"].erase("plan_digest");
  EXPECT_NE(error_of(j).find("shard.plan_digest: missing required key"), std::string::npos) << error_of(j);
  j = to_json(sharded_run());
  j["shard"]["index"] = 4;
  EXPECT_NE(error_of(j).find("shard.index: shard index 4 is not in [0, 4)"), std::string::npos) << error_of(j);
  j = to_json(sharded_run());
  j["merged"]["shards"][0]["cases"] = "many";
  EXPECT_NE(error_of(j).find("merged.shards[0].cases: expected an integer"), std::string::npos) << error_of(j);
}

TEST(ShardJson, DevicesOfARunOverSeveralGpusRoundTripAndAreOptional) {
  RunInfo run;
  for (int i : {1, 0}) {
    DeviceInfo d;
    d.index = i;
    d.name = "NVIDIA H200";
    d.uuid = "GPU-" + std::to_string(i);
    run.devices.push_back(d);
  }
  const RunInfo back = run_info_from_json(to_json(run));
  ASSERT_EQ(back.devices.size(), 2u);
  EXPECT_EQ(back.devices[0].index, 1);
  EXPECT_EQ(back.devices[1].uuid, "GPU-0");
  EXPECT_FALSE(to_json(RunInfo{}).contains("devices")) << "a one-GPU run writes no list";

  CaseRecord c;
  c.op = "rmsnorm_fwd";
  c.variant = "fused_v1";
  c.nvtx_range = "rmsnorm_fwd:fused_v1:bf16:rows=1,cols=8";
  EXPECT_FALSE(to_json(c).contains("device"));
  EXPECT_FALSE(case_from_json(to_json(c)).device.has_value());
  c.device = 1;
  EXPECT_EQ(case_from_json(to_json(c)).device, 1);
  auto j = to_json(run);
  j["devices"][1]["sm_count"] = "many";
  EXPECT_NE(error_of(j).find("devices[1].sm_count: expected an integer"), std::string::npos) << error_of(j);
}

}  // namespace
}  // namespace kwb
