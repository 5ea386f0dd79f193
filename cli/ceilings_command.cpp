// `kwb ceilings`: measure (or show the cached) ceilings of a GPU beside its datasheet figures.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "cli/flag_values.hpp"
#include "harness/derive/ceilings.hpp"
#include "harness/session/supervisor.hpp"
#include "harness/record/report.hpp"
#include "harness/record/output_paths.hpp"

namespace kwb::cli {
namespace {

void print_ceilings(const DeviceInfo& d, const Ceilings& measured, const Ceilings& sheet) {
  std::cout << fmt::format("{} ({}), driver {}, {} SMs, L2 {} MiB\n", d.name, d.uuid,
                           d.driver_release.empty() ? std::to_string(d.driver_version) : d.driver_release,
                           d.sm_count, d.l2_bytes >> 20);
  std::cout << fmt::format("{:<34} {:>12} {:>12} {:>8}\n", "ceiling", measured.source, "datasheet", "ratio");
  auto row = [](const std::string& name, double m, double s, const std::string& unit) {
    std::cout << fmt::format("{:<34} {:>12.1f} {:>12.1f} {:>7.0f}%  {}\n", name, m, s, s > 0 ? 100 * m / s : 0, unit);
  };
  row("DRAM copy (read + write)", measured.dram_copy_gbps, sheet.dram_copy_gbps, "GB/s");
  if (!measured.dram_copy_method.empty()) std::cout << "  best of: " << measured.dram_copy_method << "\n";
  row("DRAM read-only", measured.dram_read_gbps, sheet.dram_read_gbps, "GB/s");
  if (!measured.dram_read_method.empty()) std::cout << "  best of: " << measured.dram_read_method << "\n";
  if (measured.dram_write_gbps > 0) {
    row("DRAM write-only", measured.dram_write_gbps, 0, "GB/s");
    std::cout << "  best of: " << measured.dram_write_method << "\n";
  }
  if (measured.l2_copy_gbps > 0)
    row(fmt::format("L2 copy, hot ({} MiB set)", measured.l2_working_set_bytes >> 20), measured.l2_copy_gbps, 0, "GB/s");
  row("FP32 FMA (CUDA cores)", measured.fp32_tflops, sheet.fp32_tflops, "TFLOP/s");
  for (const auto& [dtype, rate] : measured.tensor_tflops) {
    const auto it = sheet.tensor_tflops.find(dtype);
    const auto clock = measured.tensor_sm_mhz.find(dtype);
    row("tensor " + dtype + " (cuBLASLt)", rate, it == sheet.tensor_tflops.end() ? 0 : it->second,
        clock == measured.tensor_sm_mhz.end() ? "TFLOP/s" : fmt::format("TFLOP/s at {:.0f} MHz", clock->second));
  }
  if (!measured.tensor_tflops.empty() && measured.source == "measured")
    std::cout << "  tensor: the best sample of 3 shapes x 3 algorithms, each timed cold after a rest\n";
  if (!measured.dram_copy_by_method.empty()) {
    std::cout << "DRAM copy by method (read + write GB/s; the ceiling is the best):\n";
    for (const auto& [method, gbps] : measured.dram_copy_by_method)
      std::cout << fmt::format("  {:<40} {:>8.1f}{}\n", method, gbps, method == measured.dram_copy_method ? "  <- best" : "");
  }
  if (!measured.dram_read_by_method.empty()) {
    std::cout << "DRAM read-only by method (GB/s; the ceiling is the best):\n";
    for (const auto& [method, gbps] : measured.dram_read_by_method)
      std::cout << fmt::format("  {:<40} {:>8.1f}{}\n", method, gbps, method == measured.dram_read_method ? "  <- best" : "");
  }
  if (!measured.measured_at.empty()) std::cout << "measured at " << measured.measured_at << "\n";
}

}  // namespace

void add_ceilings_command(CLI::App& app, int& exit_code, const std::string& self_exe) {
  auto* cmd = app.add_subcommand("ceilings", "Measure this GPU's bandwidth and FLOP-rate ceilings (cached)");
  static std::string device_text = "0";
  static bool refresh = false;
  static std::string log = "results/ceilings-worker.log";
  cmd->add_option("--device", device_text, "CUDA device index (default: 0)")->type_name("INT");
  cmd->add_flag("--refresh", refresh, "Measure again even if cached");
  cmd->add_option("--log", log, "Where the worker's output goes (default: results/ceilings-worker.log)");
  cmd->callback([&exit_code, self_exe] {
    int device = 0;
    try {
      device = parse_device_index("--device", device_text);
    } catch (const FlagError& e) {
      std::cerr << "kwb ceilings: " << e.what() << "\n";
      exit_code = kExitBadInput;
      return;
    }
    if (auto problem = check_output_file(log)) {
      std::cerr << "kwb ceilings: --log: " << *problem << "; pass a writable file with --log, e.g. --log "
                << "/tmp/kwb-ceilings.log\n";
      exit_code = kExitBadInput;
      return;
    }
    Supervisor supervisor({self_exe, device, "auto", 600, log});
    const WorkerHello hello = supervisor.start();
    if (!hello.has_gpu && hello.device_count > 0 && device >= hello.device_count) {
      std::cerr << fmt::format("kwb ceilings: --device: device {} does not exist; this machine has {} (use --device 0..{})\n",
                               device, hello.device_count, hello.device_count - 1);
      exit_code = kExitBadInput;
      return;
    }
    if (!hello.has_gpu) {
      std::cerr << no_gpu_message("ceilings", hello.no_gpu_reason) << "\n";
      exit_code = kExitNoGpu;
      return;
    }
    std::optional<Ceilings> c = refresh ? std::nullopt : load_cached_ceilings(hello.device);
    if (c) {
      std::cout << "cached in " << ceilings_cache_path(hello.device).string() << " (--refresh to measure again)\n";
    } else {
      std::string error;
      c = supervisor.measure_ceilings(&error);
      if (!c) {
        std::cerr << "kwb ceilings: measurement failed: " << error << "\n";
        exit_code = kExitCaseFailed;
        return;
      }
      try {
        save_cached_ceilings(hello.device, *c);
        std::cout << "saved to " << ceilings_cache_path(hello.device).string() << "\n";
      } catch (const std::exception& e) {
        std::cerr << "kwb ceilings: warning: could not cache the ceilings (" << e.what()
                  << "); set KWB_CACHE_DIR to a writable folder to keep them\n";
      }
    }
    print_ceilings(hello.device, *c, datasheet_ceilings(hello.device));
    exit_code = kExitOk;
  });
}

}  // namespace kwb::cli
