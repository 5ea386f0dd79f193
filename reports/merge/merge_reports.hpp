// Joining shard reports (`kwb run --shard I/N`) into the report of the whole plan. Pure: the
// reports are read and the result written by cli/merge_command.cpp.
//
// Refused (MergeError, naming the files): a report that is not a shard, shards of different
// plans (digest, case count) or shard counts, a shard given twice, a case in the wrong shard or in
// two, different settings (mode, flush, launch, preset, seed, timer) and, unless allowed, GPUs of
// different kinds (device name). Shards that hold cases but were not given are reported, and the
// merged report is then marked incomplete (run.complete = false), as is one that joins an
// interrupted shard.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "harness/record/report.hpp"

namespace kwb {

struct MergeError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct ShardReport {
  std::string file;  // as given, for the messages and run.merged.shards[].file
  Report report;
};

struct MergeOptions {
  bool allow_mixed_devices = false;
  std::string command_line;  // the merged report's run.command_line
};

struct MergeResult {
  Report report;
  // The first kListedMissingShards shards that hold cases but were not given, and how many there
  // are: a shard count read from a file may be 2^31 - 1, and every missing shard is not listed.
  std::vector<int> missing_shards;
  std::int64_t missing_shard_count = 0;
  std::vector<std::string> warnings;  // for people: missing shards, differing ceilings or builds
};

inline constexpr std::size_t kListedMissingShards = 20;

// The settings every shard must share: each changes what a time means.
inline const std::vector<std::string> kMergeSettings = {"mode", "flush", "launch", "preset", "seed", "timer"};

MergeResult merge_shard_reports(const std::vector<ShardReport>& shards, const MergeOptions& options);

}  // namespace kwb
