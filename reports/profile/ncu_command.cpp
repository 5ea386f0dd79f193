// The ncu command of one case (see ncu_command.hpp).
#include "reports/profile/ncu_command.hpp"

#include <cctype>
#include <fmt/format.h>
#include <stdexcept>

#include "harness/plan/planner.hpp"

namespace kwb {

std::vector<std::string> case_run_flags(const CaseRequest& c) {
  std::vector<std::string> flags = {"--op", c.op, "--variant", c.variant, "--dtype", std::string(to_string(c.dtype))};
  for (const auto& [name, value] : c.shape.axes) flags.insert(flags.end(), {"--axis", name + "=" + value.text()});
  for (const auto& [name, value] : c.tunables) flags.insert(flags.end(), {"--axis", name + "=" + std::to_string(value)});
  flags.insert(flags.end(), {"--seed", std::to_string(c.seed)});
  if (c.include_test_variants) flags.push_back("--include-test-variants");
  return flags;
}

std::string ncu_file_stem(const std::string& identity) {
  std::string stem = "ncu-";
  for (char c : identity) stem += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ? c : '_';
  return stem;
}

NcuCommand build_ncu_command(const CaseRequest& c, const NcuCommandSettings& settings) {
  const std::string identity = case_identity(c);
  if (const auto at = identity.find_first_of("/@[]*"); at != std::string::npos)
    throw std::invalid_argument(fmt::format("the case identity '{}' holds '{}', which ncu's NVTX filter reads as its "
                                            "own syntax; it cannot be named in --nvtx-include",
                                            identity, identity[at]));
  if (settings.kernels_per_launch < 1)
    throw std::invalid_argument(fmt::format("kernels per launch must be at least 1, not {}", settings.kernels_per_launch));
  NcuCommand cmd;
  cmd.nvtx_filter = "kwb@" + identity + "/measure/";
  cmd.launch_skip = settings.kernels_per_launch;
  cmd.launch_count = settings.kernels_per_launch;
  const bool cold = c.mode == Mode::cold;
  cmd.cache_control = cold ? "all" : "none";
  std::string metrics;
  for (const std::string& m : settings.metrics) {
    if (!metrics.empty()) metrics += ',';
    metrics += m;
  }
  cmd.argv = {settings.ncu,
              "--target-processes", "all",
              "--nvtx", "--nvtx-include", cmd.nvtx_filter,
              "--launch-skip", std::to_string(cmd.launch_skip),
              "--launch-count", std::to_string(cmd.launch_count),
              "--cache-control", cmd.cache_control,
              "--clock-control", "none",
              "--metrics", metrics,
              "--csv", "--page", "raw", "--print-units", "base",
              settings.kwb, "run"};
  const auto flags = case_run_flags(c);
  cmd.argv.insert(cmd.argv.end(), flags.begin(), flags.end());
  cmd.argv.insert(cmd.argv.end(), {"--mode", "hot", "--preset", "quick", "--timer", "events", "--datasheet-ceilings",
                                   "--out", settings.run_out});
  cmd.note = fmt::format(
      "Nsight Compute, kernel replay: the {} kernel{} of the case's second launch (--launch-skip {} "
      "--launch-count {} in its measure range), {}; --clock-control none (the GPU's own clocks)",
      cmd.launch_count, cmd.launch_count == 1 ? "" : "s", cmd.launch_skip, cmd.launch_count,
      cold ? "--cache-control all (caches flushed and invalidated before each kernel's passes: the cold case's "
             "start, as kwb's clean flush)"
           : "--cache-control none (caches as the previous launch left them: the hot case's start)");
  return cmd;
}

}  // namespace kwb
