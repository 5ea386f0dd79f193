// `kwb counters --list`: the counter sets `kwb run --counters` takes, their metrics and the replay
// passes they cost on a chip, and (--all) every base metric the chip has. It needs no GPU: the
// CUPTI host API knows each chip's counters.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "cli/run_columns.hpp"
#include "harness/plan/counter_sets.hpp"
#include "harness/plan/metric_host.hpp"
#include "harness/worker/counters/range_profiler.hpp"
#include "harness/worker/measure/device_info.hpp"

namespace kwb::cli {
namespace {

// The local GPU's chip, else the one the lent GPUs have (H100 and H200 are both GH100).
std::string default_chip(std::string* source) {
  // CUPTI's chip query needs a driver and a device (without them it may crash): ask the runtime first.
  std::string why;
  const std::string local = cuda_device_count(&why) > 0 ? chip_name(0) : std::string();
  if (!local.empty()) {
    *source = "this machine's GPU 0";
    return local;
  }
  *source = "no GPU here: the chip of H100 and H200; --chip names another";
  return "GH100";
}

void print_sets(const MetricCatalog& catalogue) {
  std::vector<std::string> names;
  for (const CounterSet& set : counter_sets()) {
    names.push_back(set.name);
    // As a run collects the set alone: the duration first, each metric once.
    const int passes = catalogue.passes_as_collected(parse_counter_request({set.name}, {}).metrics);
    std::cout << fmt::format("{}  ({} metrics, {} pass{} with the duration)\n  {}\n", set.name, set.metrics.size(),
                             passes, passes == 1 ? "" : "es", set.what);
    for (const std::string& m : set.metrics) {
      const std::string note = metric_explanation(m);
      std::cout << fmt::format("    {:<58} {}\n", m, note);
    }
    std::cout << "\n";
  }
  std::cout << fmt::format("All four sets together: {} passes per case. Every request also collects {} (the "
                           "kernels' duration in the counter pass, a cross-check; times come from the timing "
                           "pass).\nMore: --metrics NAME[,NAME...] with full names (base and rollup: "
                           "dram__bytes_read.sum); `kwb counters --list --all` shows every base metric.\n",
                           catalogue.passes_as_collected(parse_counter_request(names, {}).metrics), kDurationMetric);
  std::cout << "\n" << figures_listing();
}

void print_all(const MetricCatalog& catalogue) {
  for (const MetricInfo& m : catalogue.base_metrics())
    std::cout << fmt::format("{:<72} {:<10} {:<10} {}\n", m.name, m.type, m.unit, m.description);
  std::cout << fmt::format("{} base metrics. A counter takes a rollup: .sum, .avg, .max, .min (and "
                           ".per_second, .pct_of_peak_sustained_elapsed, ...); a ratio .pct, .ratio or .max_rate.\n",
                           catalogue.base_metrics().size());
}

}  // namespace

void add_counters_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("counters", "List the hardware-counter sets of `kwb run --counters` and their metrics");
  static bool list = false, all = false;
  static std::string chip;
  cmd->add_flag("--list", list, "List the sets, their metrics and the replay passes they cost");
  cmd->add_flag("--all", all, "With --list: every base metric of the chip, with its unit and description");
  cmd->add_option("--chip", chip, "CUPTI chip name, e.g. GH100 (default: this machine's GPU, else GH100)")
      ->type_name("CHIP");
  cmd->callback([&exit_code] {
    if (!list) {
      std::cerr << "kwb counters: say what to do: --list (the sets), --list --all (every metric of the chip)\n";
      exit_code = kExitBadInput;
      return;
    }
    // Not the chip's fault: this machine lacks CUPTI's host library (exit 1, not bad input).
    if (auto why = host_api_problem()) {
      std::cerr << "kwb counters: " << *why << "\n";
      exit_code = kExitCaseFailed;
      return;
    }
    std::string source = "--chip";
    const std::string name = chip.empty() ? default_chip(&source) : chip;
    try {
      const MetricCatalog catalogue(name);
      std::cout << fmt::format("Counters of {} ({})\n\n", name, source);
      if (all)
        print_all(catalogue);
      else
        print_sets(catalogue);
      exit_code = kExitOk;
    } catch (const CounterError& e) {
      std::cerr << "kwb counters: " << (chip.empty() ? "" : "--chip: ") << e.what() << "\n";
      exit_code = kExitBadInput;
    }
  });
}

}  // namespace kwb::cli
