// Progress lines and the summary table, formatted in one place.
#include "cli/run_output.hpp"

#include <fmt/format.h>

#include "harness/derive/derive.hpp"
#include "harness/record/speedup_summary.hpp"

namespace kwb::cli {
namespace {

std::string time_cell(const CaseRecord& r) {
  return r.timing ? fmt::format("{:.2f}", r.timing->span.median) : "-";
}

std::string optional_cell(bool present, double value, const char* format) {
  return present ? fmt::format(fmt::runtime(format), value) : "-";
}

std::string status_cell(const CaseRecord& r) {
  std::string s(to_string(r.disposition));
  if (r.timing && r.timing->stop_reason != StopReason::converged) s += "(noisy)";
  if (r.timing && r.timing->clocks && r.timing->clocks->throttled_samples > 0) s += "(throttled)";
  return s;
}

std::string kernels_cell(std::int64_t kernels) { return kernels < 0 ? "?" : std::to_string(kernels); }

std::string mib_cell(std::int64_t bytes) {
  return bytes == 0 ? "0" : fmt::format("{:.1f}", static_cast<double>(bytes) / (1 << 20));
}

// Baseline against the fastest fused variant, per op, dtype and shape, with kernel counts.
void print_speedups(std::ostream& out, const Report& report) {
  const auto rows = speedup_summary(report.cases);
  if (rows.empty()) return;
  out << fmt::format("\nSpeedup of the fastest fused variant over the unfused baseline (kernels per sample, "
                     "device memory beyond inputs and outputs, MiB):\n{:<14} {:<5} {:<16} {:>12} {:>7} {:>6}  {:<30} {:>12} {:>7} {:>6} {:>6} {:>8}\n",
                     "op", "dtype", "shape", "baseline_us", "kernels", "mem_MiB", "fastest fused", "fused_us",
                     "kernels", "mem_MiB", "%DRAM", "speedup");
  for (const auto& r : rows)
    out << fmt::format("{:<14} {:<5} {:<16} {:>12.2f} {:>7} {:>6}  {:<30} {:>12.2f} {:>7} {:>6} {:>6.1f} {:>7.2f}x\n",
                       r.op, to_string(r.dtype), r.shape.to_compact(), r.baseline_us, kernels_cell(r.baseline_kernels),
                       mib_cell(r.baseline_memory_bytes), r.best_variant, r.best_us, kernels_cell(r.best_kernels),
                       mib_cell(r.best_memory_bytes), r.best_pct_of_copy, r.speedup);
}

}  // namespace

void print_progress(std::ostream& out, const CaseRecord& r, std::size_t total, std::optional<double> eta_s) {
  std::string line = fmt::format("[{:>4}/{}] {:<58} {:<12}", r.index + 1, total, r.nvtx_range, status_cell(r));
  if (r.timing) {
    line += fmt::format(" {:>10} us", time_cell(r));
    if (r.derived) line += fmt::format(" {:>8.1f} GB/s {:>5.1f}% of DRAM roof", r.derived->bandwidth_gbps,
                                       r.derived->pct_of_bandwidth_ceiling);
    if (r.derived) {
      if (const std::string note = executed_work_note(*r.derived); !note.empty()) line += " [" + note + "]";
    }
  }
  if (r.device) line += fmt::format("  gpu{}", *r.device);
  if (eta_s && *eta_s > 0)
    line += *eta_s >= 60 ? fmt::format("  eta {}m{:02}s", static_cast<int>(*eta_s) / 60, static_cast<int>(*eta_s) % 60)
                         : fmt::format("  eta {}s", static_cast<int>(*eta_s + 0.5));
  if (!r.reason.empty()) line += "  " + r.reason.substr(0, 160);
  out << line << "\n";
}

void print_summary(std::ostream& out, const Report& report) {
  out << fmt::format("\n{:<12} {:<28} {:<5} {:<12} {:<12} {:>10} {:>9} {:>7} {:>8} {:>6}\n", "op", "variant",
                     "dtype", "shape", "status", "median_us", "GB/s", "%DRAM", "speedup", "noise%");
  int passed = 0, failed = 0, skipped = 0;
  for (const auto& r : report.cases) {
    passed += r.disposition == Disposition::passed;
    failed += r.disposition == Disposition::failed;
    skipped += r.disposition == Disposition::skipped;
    const bool d = r.derived.has_value();
    const bool s = d && r.derived->speedup_vs_baseline.has_value();
    out << fmt::format("{:<12} {:<28} {:<5} {:<12} {:<12} {:>10} {:>9} {:>7} {:>8} {:>6}\n", r.op, r.variant,
                       to_string(r.dtype), r.shape.to_compact(), status_cell(r), time_cell(r),
                       optional_cell(d, d ? r.derived->bandwidth_gbps : 0, "{:.0f}"),
                       optional_cell(d, d ? r.derived->pct_of_bandwidth_ceiling : 0, "{:.1f}"),
                       optional_cell(s, s ? *r.derived->speedup_vs_baseline : 0, "{:.2f}x"),
                       optional_cell(r.timing.has_value(), r.timing ? 100 * r.timing->span.noise : 0, "{:.2f}"));
  }
  print_speedups(out, report);
  const auto& c = report.run.ceilings;
  out << fmt::format("\n{} passed, {} failed, {} skipped", passed, failed, skipped);
  if (c) out << fmt::format("; ceilings ({}): copy {:.0f} GB/s, fp32 {:.1f} TFLOP/s", c->source,
                            c->dram_copy_gbps, c->fp32_tflops);
  out << "\n";
}

}  // namespace kwb::cli
