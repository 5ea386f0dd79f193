// Splitting one plan over several hosts: `kwb run --shard I/N` measures the cases whose plan
// position k has k mod N == I, and `kwb merge` joins the shard reports back in plan order.
//
// Every host plans the same cases in the same order (the planner is deterministic), so each can
// pick its slice alone, with no coordinator. Round-robin rather than contiguous blocks: the plan is
// ordered op by op and size by size, so blocks would give one host all the large shapes. The
// plan digest (a hash of every case identity in plan order) lets merge refuse shards of
// different plans: another suite, other filters, another build's catalogue.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "harness/catalogue/case_request.hpp"

namespace kwb {

// Shard `index` of `count`, counted from 0 (0/4 .. 3/4), as Slurm's SLURM_ARRAY_TASK_ID with
// --array=0-3 and Kubernetes' JOB_COMPLETION_INDEX count.
struct ShardSpec {
  int index = 0;
  int count = 1;
};

// Shards one plan may be split into: more would leave almost every shard empty.
inline constexpr int kMaxShards = 100000;

// "I/N" with 0 <= I < N <= kMaxShards. Throws PlanError (prefixed with `flag`) saying what is
// wrong and what to write instead; "4/4" is refused with a note that shards count from 0.
ShardSpec parse_shard(const std::string& flag, std::string_view text);

// FNV-1a 64 of the case identities in plan order, one per line, as 16 lowercase hex digits.
std::string plan_digest(const std::vector<CaseRequest>& plan);
std::string plan_digest(const std::vector<std::string>& identities);

// The shard a plan position belongs to.
inline int shard_of(std::size_t plan_position, int count) {
  return static_cast<int>(plan_position % static_cast<std::size_t>(count));
}

// The cases of `plan` in shard `spec`, in plan order; each keeps its plan position as its index
// (so records say where they go back). Empty when spec.index >= plan.size().
std::vector<CaseRequest> select_shard(const std::vector<CaseRequest>& plan, ShardSpec spec);

}  // namespace kwb
