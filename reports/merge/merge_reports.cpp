// Shard reports -> one report in plan order (see merge_reports.hpp).
#include "reports/merge/merge_reports.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include <fmt/format.h>

#include "harness/derive/derive.hpp"
#include "harness/plan/shard.hpp"

namespace kwb {
namespace {

std::string setting(const RunInfo& run, const std::string& key) {
  auto it = run.settings.find(key);
  return it == run.settings.end() ? "(absent)" : it->second;
}

std::string device_name(const RunInfo& run) { return run.device ? run.device->name : "(no device)"; }

// The figures derived metrics are computed against; the date they were measured may differ.
bool same_ceilings(const std::optional<Ceilings>& a, const std::optional<Ceilings>& b) {
  if (!a || !b) return a.has_value() == b.has_value();
  return a->source == b->source && a->dram_copy_gbps == b->dram_copy_gbps && a->dram_read_gbps == b->dram_read_gbps &&
         a->dram_write_gbps == b->dram_write_gbps &&
         a->l2_copy_gbps == b->l2_copy_gbps && a->fp32_tflops == b->fp32_tflops && a->tensor_tflops == b->tensor_tflops;
}

// Every check that involves one shard against the first; throws MergeError naming both files.
void check_same_plan(const ShardReport& first, const ShardReport& s, const MergeOptions& options) {
  const ShardInfo& a = *first.report.run.shard;
  const ShardInfo& b = *s.report.run.shard;
  if (a.count != b.count)
    throw MergeError(fmt::format("{} is shard {}/{} but {} is shard {}/{}: shards of one merge must split the plan "
                                 "the same number of ways", s.file, b.index, b.count, first.file, a.index, a.count));
  if (a.plan_digest != b.plan_digest || a.plan_cases != b.plan_cases)
    throw MergeError(fmt::format("{} and {} come from different plans (plan digest {} of {} cases vs {} of {}); run "
                                 "every shard with the same suite, filters and kwb build", first.file, s.file,
                                 a.plan_digest, a.plan_cases, b.plan_digest, b.plan_cases));
  // A shard written before the launch was recorded launched on the stream (launch_of).
  auto value = [](const Report& r, const std::string& key) { return key == "launch" ? launch_of(r) : setting(r.run, key); };
  for (const auto& key : kMergeSettings) {
    const std::string x = value(first.report, key), y = value(s.report, key);
    if (x != y)
      throw MergeError(fmt::format("{} and {} were measured with different {} ({} vs {}); their times cannot be "
                                   "joined into one report: rerun the odd shard with the same settings",
                                   first.file, s.file, key, x, y));
  }
  const std::string da = device_name(first.report.run), db = device_name(s.report.run);
  if (da != db && !options.allow_mixed_devices)
    throw MergeError(fmt::format("{} was measured on {} but {} on {}: one report of different GPUs mixes their "
                                 "times; pass --allow-mixed-devices to join them anyway (the report lists each "
                                 "shard's device)", first.file, da, s.file, db));
}

// Wrong-shard and overlapping cases; fills `owner` (plan position -> file).
void check_cases(const ShardReport& s, std::map<int, const std::string*>& owner) {
  const ShardInfo& info = *s.report.run.shard;
  for (const CaseRecord& c : s.report.cases) {
    if (c.index < 0 || c.index >= info.plan_cases)
      throw MergeError(fmt::format("{}: case {} has plan position {}, outside the plan of {} cases", s.file,
                                   c.nvtx_range, c.index, info.plan_cases));
    if (shard_of(static_cast<std::size_t>(c.index), info.count) != info.index)
      throw MergeError(fmt::format("{}: case {} at plan position {} belongs to shard {}/{}, not {}/{}", s.file,
                                   c.nvtx_range, c.index, shard_of(static_cast<std::size_t>(c.index), info.count),
                                   info.count, info.index, info.count));
    auto [it, inserted] = owner.emplace(c.index, &s.file);
    if (!inserted)
      throw MergeError(fmt::format("case {} (plan position {}) is in both {} and {}: the shards overlap", c.nvtx_range,
                                   c.index, *it->second, s.file));
  }
}

}  // namespace

MergeResult merge_shard_reports(const std::vector<ShardReport>& shards, const MergeOptions& options) {
  if (shards.empty()) throw MergeError("no shard report given; pass the report.json of every shard");
  for (const auto& s : shards)
    if (!s.report.run.shard)
      throw MergeError(fmt::format("{} is not a shard report (it has no run.shard); merge joins the reports of "
                                   "`kwb run --shard I/N`", s.file));
  const ShardReport& first = shards.front();
  std::map<int, const ShardReport*> by_index;
  std::map<int, const std::string*> owner;
  for (const auto& s : shards) {
    check_same_plan(first, s, options);
    const int index = s.report.run.shard->index;
    if (auto it = by_index.find(index); it != by_index.end())
      throw MergeError(fmt::format("shard {}/{} is given twice: {} and {}", index, s.report.run.shard->count,
                                   it->second->file, s.file));
    by_index[index] = &s;
    check_cases(s, owner);
  }

  const ShardInfo& plan = *first.report.run.shard;
  MergeResult result;
  // Shards at or past the plan's size hold no case: their runs write no report and miss nothing.
  const std::int64_t shards_with_cases = std::min<std::int64_t>(plan.count, plan.plan_cases);
  std::int64_t given_with_cases = 0;
  for (const auto& entry : by_index) given_with_cases += entry.first < shards_with_cases ? 1 : 0;
  result.missing_shard_count = shards_with_cases - given_with_cases;
  // The first few missing, found in O(given + listed) steps whatever the shard count.
  for (std::int64_t i = 0; i < shards_with_cases && result.missing_shards.size() < kListedMissingShards; ++i)
    if (!by_index.count(static_cast<int>(i))) result.missing_shards.push_back(static_cast<int>(i));

  Report& out = result.report;
  out.run = first.report.run;  // device, ceilings, suite, settings, build of the first shard
  out.run.shard.reset();
  out.run.command_line = options.command_line;
  out.run.settings["cases_planned"] = std::to_string(plan.plan_cases);
  MergeInfo merged;
  merged.shard_count = plan.count;
  merged.plan_cases = plan.plan_cases;
  merged.plan_digest = plan.plan_digest;
  merged.missing_shards = result.missing_shards;
  bool all_complete = true;
  long long restarts = 0;
  for (const auto& [index, s] : by_index) {  // shard order
    const RunInfo& run = s->report.run;
    out.run.started_at = std::min(out.run.started_at, run.started_at);  // ISO 8601 UTC sorts as text
    out.run.finished_at = std::max(out.run.finished_at, run.finished_at);
    all_complete = all_complete && run.complete;
    if (!same_ceilings(run.ceilings, first.report.run.ceilings)) merged.ceilings_differ = true;
    if (run.git_sha != first.report.run.git_sha || run.tool_version != first.report.run.tool_version)
      result.warnings.push_back(fmt::format("{} was measured by kwb {} ({}), {} by {} ({})", s->file, run.tool_version,
                                            run.git_sha, first.file, first.report.run.tool_version,
                                            first.report.run.git_sha));
    restarts += std::atoll(setting(run, "worker_restarts").c_str());
    merged.shards.push_back({index, s->file, run.host, run.device ? run.device->name : "",
                             run.device ? run.device->uuid : "", run.started_at, run.finished_at,
                             static_cast<std::int64_t>(s->report.cases.size())});
    out.cases.insert(out.cases.end(), s->report.cases.begin(), s->report.cases.end());
  }
  if (first.report.run.settings.count("worker_restarts")) out.run.settings["worker_restarts"] = std::to_string(restarts);
  std::sort(out.cases.begin(), out.cases.end(), [](const CaseRecord& a, const CaseRecord& b) { return a.index < b.index; });
  // A baseline and its fused variants usually land in different shards: speedups need them all.
  derive_speedups(out.cases);
  out.run.complete = all_complete && result.missing_shard_count == 0;
  if (result.missing_shard_count > 0) {
    std::string list;
    for (int i : result.missing_shards) list += fmt::format("{}{}/{}", list.empty() ? "" : ", ", i, plan.count);
    const std::int64_t unlisted = result.missing_shard_count - static_cast<std::int64_t>(result.missing_shards.size());
    if (unlisted > 0) list += fmt::format(" and {} more", unlisted);
    out.run.settings["shards_missing"] = std::to_string(result.missing_shard_count);
    result.warnings.insert(result.warnings.begin(),
                           fmt::format("missing shard(s) {}: the merged report holds {} of {} cases and is marked "
                                       "incomplete", list, out.cases.size(), plan.plan_cases));
  }
  if (!all_complete) result.warnings.push_back("a shard run was interrupted; the merged report is marked incomplete");
  if (merged.ceilings_differ)
    result.warnings.push_back("the shards' ceilings differ; the report shows the first shard's, and each case's "
                              "efficiency was computed against its own shard's");
  out.run.merged = std::move(merged);
  return result;
}

}  // namespace kwb
