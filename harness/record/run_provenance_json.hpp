// How a run was planned and joined, as JSON in run.suite, run.shard and run.merged (see
// record_json.hpp for the codec's conventions: strict reads whose errors start with the JSON path).
#pragma once

#include <nlohmann/json.hpp>

#include "harness/record/json_node.hpp"
#include "harness/record/record.hpp"

namespace kwb {

nlohmann::ordered_json suite_json(const SuiteInfo& suite);
SuiteInfo read_suite(const json_read::Node& n);

nlohmann::ordered_json shard_json(const ShardInfo& shard);
ShardInfo read_shard(const json_read::Node& n);

nlohmann::ordered_json merge_json(const MergeInfo& merge);
MergeInfo read_merge(const json_read::Node& n);

}  // namespace kwb
