// Shard selection, the --shard grammar and the plan digest (see shard.hpp).
#include "harness/plan/shard.hpp"

#include <charconv>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "harness/plan/planner.hpp"
#include "harness/catalogue/excerpt.hpp"

namespace kwb {
namespace {

// A whole non-negative decimal number, or nullopt (signs, spaces, overflow, empty).
std::optional<long long> whole_number(std::string_view s) {
  if (s.empty() || s.size() > 12) return std::nullopt;
  long long v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

}  // namespace

ShardSpec parse_shard(const std::string& flag, std::string_view text) {
  const std::string example = "write I/N with 0 <= I < N, e.g. 0/4 .. 3/4";
  const auto slash = text.find('/');
  if (slash == std::string_view::npos)
    throw PlanError(fmt::format("{}: '{}' is not a shard; {}", flag, excerpt(text), example));
  const auto index = whole_number(text.substr(0, slash));
  const auto count = whole_number(text.substr(slash + 1));
  if (!index || !count)
    throw PlanError(fmt::format("{}: '{}' is not a shard (I and N must be whole numbers); {}", flag, excerpt(text), example));
  if (*count == 0 || *count > kMaxShards)
    throw PlanError(fmt::format("{}: '{}': the shard count must be 1 to {}; {}", flag, text, kMaxShards, example));
  if (*index >= *count)
    throw PlanError(fmt::format("{}: '{}': shards count from 0, so the last of {} is {}/{}; with Slurm use "
                                "--array=0-{} and $SLURM_ARRAY_TASK_ID/{} (1-based indices are not accepted)",
                                flag, text, *count, *count - 1, *count, *count - 1, *count));
  return {static_cast<int>(*index), static_cast<int>(*count)};
}

std::string plan_digest(const std::vector<std::string>& identities) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64 offset basis
  auto mix = [&h](unsigned char byte) {
    h ^= byte;
    h *= 0x100000001b3ull;  // FNV-1a 64 prime
  };
  for (const auto& id : identities) {
    for (char c : id) mix(static_cast<unsigned char>(c));
    mix('\n');  // separates "a","bc" from "ab","c"
  }
  return fmt::format("{:016x}", h);
}

std::string plan_digest(const std::vector<CaseRequest>& plan) {
  std::vector<std::string> ids;
  ids.reserve(plan.size());
  for (const auto& c : plan) ids.push_back(case_identity(c));
  return plan_digest(ids);
}

std::vector<CaseRequest> select_shard(const std::vector<CaseRequest>& plan, ShardSpec spec) {
  std::vector<CaseRequest> out;
  for (std::size_t k = static_cast<std::size_t>(spec.index); k < plan.size(); k += static_cast<std::size_t>(spec.count)) {
    out.push_back(plan[k]);
    out.back().index = static_cast<int>(k);
  }
  return out;
}

}  // namespace kwb
