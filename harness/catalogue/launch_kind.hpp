// How a case's samples are launched. Plain names, no CUDA: the planner, the CLI, the worker
// protocol and the records carry it.
//
// stream (default): each sample calls the variant's launch, as a program would: a multi-launch
//   variant pays the host's launch gaps between its kernels, and CUPTI's span counts them.
// graph: the variant's launches of one sample are captured once in a CUDA graph and each sample
//   replays it (one cudaGraphLaunch): the per-launch host overhead is gone, so launch-bound cases
//   (small shapes, unfused baselines) show the device time a graph-capturing framework would get.
//   A variant that cannot be captured (it synchronizes, allocates, queries) is skipped with why.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kwb {

enum class LaunchKind { stream, graph };

std::string_view to_string(LaunchKind kind);
std::optional<LaunchKind> parse_launch_kind(std::string_view text);

// What the plan lines that name the mode add for it: ", launch graph" ("mode cold, launch graph,
// preset default"), nothing for the default.
std::string launch_note(LaunchKind kind);

// The launch of a report written before the setting existed: every sample was a stream launch.
inline constexpr std::string_view kDefaultLaunchName = "stream";

}  // namespace kwb
