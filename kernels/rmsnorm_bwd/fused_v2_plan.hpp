// Launch plan of rmsnorm_bwd fused_v2_pipelined_any_cols, host-only C++ so that the CPU tests
// can check it: how a row is split over threads, and a grid that keeps every row group on rows
// of one 16-byte alignment class (see the kernel's header comment).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <optional>

namespace kwb::rmsnorm_bwd_v2 {

constexpr int kMaxThreads = 1024;
constexpr int kMaxParts = 1024;         // grid cap (a multiple of 8: the row-class rounding stays under it)
constexpr int kMaxElemsPerThread = 16;  // x, dy of two rows and the fp32 column sums in registers
constexpr int kMaxNamedGroups = 15;     // named barriers 1..15 (0 is __syncthreads)

struct LaunchPlan {
  int vectors_per_thread = 1;  // VPT (16-byte vectors of x and of dy per thread per row)
  int tpr = 32;                // threads per row group
  int groups = 1;              // row groups per block
  int block = 32;              // tpr * groups
};

// vpt_pref: vectors per thread unless the row needs more (or fits a warp with up to the most);
// block_pref: the block size aimed for. nullopt: the row does not fit 1024 threads.
inline std::optional<LaunchPlan> plan_for(std::int64_t cols, std::size_t elem_bytes, int vpt_pref, int block_pref) {
  const std::int64_t E = 16 / static_cast<std::int64_t>(elem_bytes);
  const int vpt_max = static_cast<int>(kMaxElemsPerThread / E);
  const std::int64_t nvec = cols / E;  // a row with a head has fewer, never more
  LaunchPlan p;
  auto threads = [&] { return (nvec + p.vectors_per_thread - 1) / p.vectors_per_thread; };
  p.vectors_per_thread = std::clamp(vpt_pref, 1, vpt_max);
  if (nvec <= std::int64_t{32} * vpt_max)  // short rows: a warp per row, no barrier
    while (threads() > 32) p.vectors_per_thread *= 2;
  while (threads() > kMaxThreads && p.vectors_per_thread < vpt_max) p.vectors_per_thread *= 2;
  if (threads() > kMaxThreads) return std::nullopt;
  p.tpr = static_cast<int>(std::max<std::int64_t>(32, (threads() + 31) / 32 * 32));
  p.groups = std::max(1, std::min(block_pref, kMaxThreads) / p.tpr);
  if (p.tpr > 32) p.groups = std::min(p.groups, kMaxNamedGroups);
  p.block = p.tpr * p.groups;
  return p;
}

// Rows r and r + m start at the same offset mod 16 bytes when m * cols % E == 0 (E elements
// per 16 bytes): the smallest such m.
inline int row_class_period(std::int64_t cols, std::size_t elem_bytes) {
  const std::int64_t E = 16 / static_cast<std::int64_t>(elem_bytes);
  return static_cast<int>(E / std::gcd(cols, E));
}

inline std::int64_t round_up(std::int64_t v, std::int64_t m) { return (v + m - 1) / m * m; }

// The grid (= rows of partials): at most one block per `groups` rows, `resident_blocks` and
// kMaxParts, rounded up to a multiple of period / gcd(groups, period) so that the row stride
// grid * groups is a multiple of the period.
inline std::int64_t parts_for(std::int64_t rows, std::int64_t cols, std::size_t elem_bytes, const LaunchPlan& p,
                              std::int64_t resident_blocks) {
  const int period = row_class_period(cols, elem_bytes);
  const std::int64_t m = period / std::gcd(p.groups, period);
  const std::int64_t grid = std::min({(rows + p.groups - 1) / p.groups, resident_blocks, std::int64_t{kMaxParts}});
  return round_up(std::max<std::int64_t>(grid, 1), m);
}

// Partial rows the workspace holds for any tunable values: parts_for never exceeds it.
inline std::int64_t workspace_parts(std::int64_t rows) {
  return round_up(std::min<std::int64_t>(std::max<std::int64_t>(rows, 1), kMaxParts), 8);
}

}  // namespace kwb::rmsnorm_bwd_v2
