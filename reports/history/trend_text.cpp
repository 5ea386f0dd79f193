#include "reports/history/trend_text.hpp"

#include <fmt/format.h>

namespace kwb::history {
namespace {

// "2026-11-22T22:48:16Z" -> "2026-11-22 22:48"
std::string short_date(const std::string& iso) {
  std::string out = iso.substr(0, 16);
  if (out.size() > 10 && out[10] == 'T') out[10] = ' ';
  return out;
}

std::string optional_number(const std::optional<double>& v, const char* format) {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string("-");
}

// Prints rows[begin, end): one case on one device.
void print_series(std::ostream& out, const std::vector<TrendRow>& rows, std::size_t begin, std::size_t end,
                  const ChangeRule& rule, TrendSummary& summary) {
  const TrendRow& first = rows[begin];
  out << fmt::format("{}  on {}{}{}\n", first.identity,
                     first.device_name.empty() ? "an unknown device" : first.device_name,
                     first.driver.empty() ? "" : " (driver " + first.driver + ")",
                     first.settings.empty() ? "" : ", " + first.settings);
  out << fmt::format("  {:<16}  {:<12}  {:>10}  {:>8}  {:>8}  {:>7}\n", "date", "git sha", "median us", "vs prev",
                     "GB/s", "% DRAM");
  // Change points are judged over the timed runs only; a skipped or failed run breaks nothing.
  std::vector<double> medians;
  std::vector<std::size_t> timed_rows;
  for (std::size_t i = begin; i < end; ++i)
    if (rows[i].median_us && *rows[i].median_us > 0) {
      medians.push_back(*rows[i].median_us);
      timed_rows.push_back(i);
    }
  const std::vector<TrendStep> steps = find_change_points(medians, rule);
  std::size_t next_timed = 0;
  for (std::size_t i = begin; i < end; ++i) {
    const TrendRow& row = rows[i];
    ++summary.runs;
    std::string median = row.disposition, vs_prev = "", flag;
    if (next_timed < timed_rows.size() && timed_rows[next_timed] == i) {
      const TrendStep& s = steps[next_timed];
      median = fmt::format("{:.2f}", *row.median_us);
      vs_prev = next_timed == 0 ? "-" : fmt::format("{:+.1f}%", 100 * s.change_vs_previous);
      if (s.change) {
        ++summary.change_points;
        flag = fmt::format("  CHANGE {:+.1f}% vs {:.2f} us (median of the runs before; threshold {:.1f}%)",
                           100 * (*row.median_us / s.reference - 1), s.reference, 100 * s.threshold);
      }
      if (row.disposition != "passed" && row.disposition != "not_verified") flag += "  " + row.disposition;
      ++next_timed;
    }
    const std::string sha = row.git_sha.substr(0, 12);
    out << fmt::format("  {:<16}  {:<12}  {:>10}  {:>8}  {:>8}  {:>7}{}\n", short_date(row.started_at), sha, median,
                       vs_prev, optional_number(row.gbps, "{:.1f}"), optional_number(row.pct_of_copy, "{:.1f}%"), flag);
  }
  ++summary.series;
}

}  // namespace

TrendSummary print_trend(std::ostream& out, const std::vector<TrendRow>& rows, const ChangeRule& rule) {
  TrendSummary summary;
  std::size_t begin = 0;
  for (std::size_t i = 1; i <= rows.size(); ++i) {
    if (i < rows.size() && rows[i].identity == rows[begin].identity &&
        rows[i].device_name == rows[begin].device_name && rows[i].settings == rows[begin].settings)
      continue;
    if (summary.series) out << "\n";
    print_series(out, rows, begin, i, rule, summary);
    begin = i;
  }
  return summary;
}

}  // namespace kwb::history
