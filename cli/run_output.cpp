// Progress lines and the summary table, formatted in one place.
#include "cli/run_output.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "harness/catalogue/math_label.hpp"
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

// "6.54x", and "6.54x (tf32 vs fp32)" where the case's math differs from its baseline's.
std::string speedup_cell(double speedup, const std::string& math_note) {
  return fmt::format("{:.2f}x", speedup) + (math_note.empty() ? "" : " (" + math_note + ")");
}

std::string or_dash(const std::string& text) { return text.empty() ? "-" : text; }

// The rate a case is judged by: GB/s for a memory-bound case, TFLOP/s for a compute-bound one (its
// bound at the executed intensity), and its % of that roof; "-" where nothing was timed.
std::string rate_cell(const CaseRecord& r) {
  if (!r.derived) return "-";
  return r.derived->bound == "compute" ? fmt::format("{:.1f} TF/s", r.derived->tflops)
                                       : fmt::format("{:.0f} GB/s", r.derived->bandwidth_gbps);
}
std::string roof_cell(const CaseRecord& r) {
  return r.derived ? fmt::format("{:.1f}", r.derived->pct_of_roofline) : "-";
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
                     "device memory beyond inputs and outputs, MiB; where the arithmetic differs, the speedup says "
                     "so and the next row is the fastest of the baseline's):\n"
                     "{:<14} {:<5} {:<16} {:<14} {:>12} {:>7} {:>6}  {:<30} {:<14} {:<8} {:>12} {:>7} {:>6} {:>6} {:>8}\n",
                     "op", "dtype", "shape", "baseline math", "baseline_us", "kernels", "mem_MiB", "fastest fused",
                     "math", "uses", "fused_us", "kernels", "mem_MiB", "%roof", "speedup");
  for (const auto& r : rows)
    out << fmt::format("{:<14} {:<5} {:<16} {:<14} {:>12.2f} {:>7} {:>6}  {:<30} {:<14} {:<8} {:>12.2f} {:>7} {:>6} {:>6.1f} {:>8}\n",
                       r.op, to_string(r.dtype), r.shape_label, or_dash(r.baseline_math), r.baseline_us,
                       kernels_cell(r.baseline_kernels), mib_cell(r.baseline_memory_bytes), r.best_variant,
                       or_dash(r.best_math), or_dash(uses_text(r.best_uses)), r.best_us, kernels_cell(r.best_kernels),
                       mib_cell(r.best_memory_bytes), r.best_pct_of_roofline, speedup_cell(r.speedup, r.math_note));
}

}  // namespace

void print_progress(std::ostream& out, const CaseRecord& r, std::size_t total, std::optional<double> eta_s) {
  std::string line = fmt::format("[{:>4}/{}] {:<58} {:<12}", r.index + 1, total, r.nvtx_range, status_cell(r));
  if (r.timing) {
    line += fmt::format(" {:>10} us", time_cell(r));
    if (r.derived) line += fmt::format(" {:>12} {:>5.1f}% of the {} roof", rate_cell(r), r.derived->pct_of_roofline,
                                       r.derived->bound == "compute" ? "compute" : "DRAM");
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

void print_summary(std::ostream& out, const Report& report, const std::vector<CounterColumn>& columns) {
  // The speedup comes last of the fixed columns: where the case's math differs from its
  // baseline's it says "(tf32 vs fp32)"; the chosen counter columns follow it, each as wide as its
  // name or its widest cell.
  std::vector<std::vector<std::string>> extra(report.cases.size());
  std::vector<std::size_t> widths;
  for (const CounterColumn& column : columns) widths.push_back(std::max<std::size_t>(column.name.size(), 8));
  for (std::size_t i = 0; i < report.cases.size(); ++i)
    for (std::size_t k = 0; k < columns.size(); ++k) {
      extra[i].push_back(counter_column_cell(columns[k], report.cases[i]));
      widths[k] = std::max(widths[k], extra[i].back().size());
    }
  // A speedup with a math note is wider than its column: with counter columns after it, every
  // speedup cell takes the widest one's width, so that they stay aligned.
  std::vector<std::string> speedups;
  std::size_t speedup_width = 8;
  for (const CaseRecord& r : report.cases) {
    const bool s = r.derived && r.derived->speedup_vs_baseline;
    speedups.push_back(s ? speedup_cell(*r.derived->speedup_vs_baseline, math_comparison(r.math, r.derived->baseline_math))
                         : "-");
    if (!columns.empty()) speedup_width = std::max(speedup_width, speedups.back().size());
  }
  auto extra_cells = [&](auto cell) {
    std::string s;
    for (std::size_t k = 0; k < columns.size(); ++k) s += fmt::format(" {:>{}}", cell(k), widths[k]);
    return s;
  };
  out << fmt::format("\n{:<12} {:<28} {:<5} {:<12} {:<14} {:<8} {:<12} {:>10} {:>11} {:>6} {:>6} {:>{}}", "op",
                     "variant", "dtype", "shape", "math", "uses", "status", "median_us", "rate", "%roof", "noise%",
                     "speedup", speedup_width)
      << extra_cells([&](std::size_t k) { return columns[k].name; }) << "\n";
  int passed = 0, failed = 0, skipped = 0;
  for (std::size_t i = 0; i < report.cases.size(); ++i) {
    const CaseRecord& r = report.cases[i];
    passed += r.disposition == Disposition::passed;
    failed += r.disposition == Disposition::failed;
    skipped += r.disposition == Disposition::skipped;
    out << fmt::format("{:<12} {:<28} {:<5} {:<12} {:<14} {:<8} {:<12} {:>10} {:>11} {:>6} {:>6} {:>{}}", r.op,
                       r.variant, to_string(r.dtype), shown_shape(r), or_dash(r.math), or_dash(uses_text(r.uses)),
                       status_cell(r), time_cell(r), rate_cell(r), roof_cell(r),
                       optional_cell(r.timing.has_value(), r.timing ? 100 * r.timing->span.noise : 0, "{:.2f}"),
                       speedups[i], speedup_width)
        << extra_cells([&](std::size_t k) { return extra[i][k]; }) << "\n";
  }
  print_speedups(out, report);
  const auto& c = report.run.ceilings;
  out << fmt::format("\n{} passed, {} failed, {} skipped", passed, failed, skipped);
  if (c) out << fmt::format("; ceilings ({}): copy {:.0f} GB/s, fp32 {:.1f} TFLOP/s", c->source,
                            c->dram_copy_gbps, c->fp32_tflops);
  out << "\n";
}

}  // namespace kwb::cli
