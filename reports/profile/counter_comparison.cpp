// kwb's counters beside ncu's (see counter_comparison.hpp).
#include "reports/profile/counter_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace kwb {
namespace {

std::string value_text(std::optional<double> v) {
  if (!v) return "-";
  if (std::fabs(*v) < 1e15 && *v == std::round(*v)) return fmt::format("{:.0f}", *v);
  return fmt::format("{:.6g}", *v);
}

}  // namespace

bool is_agreement_count(const std::string& metric) {
  if (!metric.ends_with(".sum")) return false;
  // kwb's range counts the write-back of the lines a kernel leaves dirty in the L2; ncu counts
  // what is written back while the kernel runs (up to the L2's size less): shown, not checked.
  if (metric.starts_with(kDramBytesWriteMetric)) return false;
  for (const char* varies : {"_hit", "_miss", "cycles", "time_duration", "warps_active"})
    if (metric.find(varies) != std::string::npos) return false;
  for (const char* count : {"bytes", "sectors", "requests", "inst_executed", "ops_path", "ctas_launched",
                            "warps_launched"})
    if (metric.find(count) != std::string::npos) return true;
  return false;
}

std::vector<CounterComparisonRow> compare_counters(const CaseCounters* kwb, const CaseCounters& ncu,
                                                   double tolerance) {
  std::vector<std::string> metrics = ncu.metrics;
  if (kwb)
    for (const std::string& m : kwb->metrics)
      if (std::find(metrics.begin(), metrics.end(), m) == metrics.end()) metrics.push_back(m);
  std::vector<CounterComparisonRow> rows;
  for (const std::string& m : metrics) {
    CounterComparisonRow row;
    row.metric = m;
    row.checked = is_agreement_count(m);
    if (const auto v = ncu.total.find(m); v != ncu.total.end()) row.ncu = v->second;
    if (kwb)
      if (const auto v = kwb->total.find(m); v != kwb->total.end()) row.kwb = v->second;
    if (row.kwb && row.ncu) {
      if (*row.kwb != 0)
        row.ratio = *row.ncu / *row.kwb;
      else if (*row.ncu == 0)
        row.ratio = 1.0;
      if (row.checked) row.agrees = row.ratio && std::fabs(*row.ratio - 1) <= tolerance;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string comparison_table(const std::vector<CounterComparisonRow>& rows, double tolerance) {
  std::size_t width = 6;
  for (const auto& r : rows) width = std::max(width, r.metric.size());
  std::string out = fmt::format("{:<{}}  {:>16}  {:>16}  {:>8}  {}\n", "metric", width, "kwb", "ncu", "ncu/kwb",
                                fmt::format("agreement (counts, within {:.0f}%)", 100 * tolerance));
  for (const auto& r : rows) {
    std::string verdict = "-";
    if (r.checked) {
      if (!r.agrees)
        verdict = "not compared";
      else if (*r.agrees)
        verdict = "ok";
      else
        verdict = r.ratio ? fmt::format("off by {:+.2f}%", 100 * (*r.ratio - 1)) : "off (kwb 0)";
    }
    out += fmt::format("{:<{}}  {:>16}  {:>16}  {:>8}  {}\n", r.metric, width, value_text(r.kwb), value_text(r.ncu),
                       r.ratio ? fmt::format("{:.4f}", *r.ratio) : "-", verdict);
  }
  return out;
}

}  // namespace kwb
