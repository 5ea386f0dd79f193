#include "reports/history/trend_text.hpp"

#include <algorithm>

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

struct Series {
  std::size_t begin = 0, end = 0;  // rows[begin, end): one case on one device, measured alike
  std::vector<std::size_t> timed_rows;  // the runs change points are judged over
  std::vector<TrendStep> steps;         // one per timed row
  int change_points = 0;
};

// Change points are judged over the timed runs only; a skipped or failed run breaks nothing.
Series judge_series(const std::vector<TrendRow>& rows, std::size_t begin, std::size_t end, const ChangeRule& rule) {
  Series s{begin, end, {}, {}, 0};
  std::vector<double> medians;
  for (std::size_t i = begin; i < end; ++i)
    if (rows[i].median_us && *rows[i].median_us > 0) {
      medians.push_back(*rows[i].median_us);
      s.timed_rows.push_back(i);
    }
  s.steps = find_change_points(medians, rule);
  for (const TrendStep& step : s.steps) s.change_points += step.change ? 1 : 0;
  return s;
}

void print_series(std::ostream& out, const std::vector<TrendRow>& rows, const Series& s) {
  const TrendRow& first = rows[s.begin];
  out << fmt::format("{}  on {}{}{}\n", first.identity,
                     first.device_name.empty() ? "an unknown device" : first.device_name,
                     first.driver.empty() ? "" : " (driver " + first.driver + ")",
                     first.settings.empty() ? "" : ", " + first.settings);
  out << fmt::format("  {:<16}  {:<12}  {:>10}  {:>8}  {:>8}  {:>7}\n", "date", "git sha", "median us", "vs prev",
                     "GB/s", "% DRAM");
  std::size_t next_timed = 0;
  for (std::size_t i = s.begin; i < s.end; ++i) {
    const TrendRow& row = rows[i];
    std::string median = row.disposition, vs_prev = "", flag;
    if (next_timed < s.timed_rows.size() && s.timed_rows[next_timed] == i) {
      const TrendStep& step = s.steps[next_timed];
      median = fmt::format("{:.2f}", *row.median_us);
      vs_prev = next_timed == 0 ? "-" : fmt::format("{:+.1f}%", 100 * step.change_vs_previous);
      if (step.change)
        flag = fmt::format("  CHANGE {:+.1f}% vs {:.2f} us (median of the runs before; threshold {:.1f}%)",
                           100 * (*row.median_us / step.reference - 1), step.reference, 100 * step.threshold);
      if (row.disposition != "passed" && row.disposition != "not_verified") flag += "  " + row.disposition;
      ++next_timed;
    }
    const std::string sha = row.git_sha.substr(0, 12);
    out << fmt::format("  {:<16}  {:<12}  {:>10}  {:>8}  {:>8}  {:>7}{}\n", short_date(row.started_at), sha, median,
                       vs_prev, optional_number(row.gbps, "{:.1f}"), optional_number(row.pct_of_copy, "{:.1f}%"), flag);
  }
}

}  // namespace

TrendSummary print_trend(std::ostream& out, const std::vector<TrendRow>& rows, const ChangeRule& rule,
                         std::size_t max_series) {
  std::vector<Series> series;
  std::size_t begin = 0;
  for (std::size_t i = 1; i <= rows.size(); ++i) {
    if (i < rows.size() && rows[i].identity == rows[begin].identity &&
        rows[i].device_name == rows[begin].device_name && rows[i].settings == rows[begin].settings)
      continue;
    series.push_back(judge_series(rows, begin, i, rule));
    begin = i;
  }
  TrendSummary summary;
  summary.series = static_cast<int>(series.size());
  for (const Series& s : series) {
    summary.runs += static_cast<int>(s.end - s.begin);
    summary.change_points += s.change_points;
  }
  // Those with a change point first when not all are printed; the rows' order otherwise.
  if (max_series > 0 && max_series < series.size())
    std::stable_partition(series.begin(), series.end(), [](const Series& s) { return s.change_points > 0; });
  for (const Series& s : series) {
    if (max_series > 0 && static_cast<std::size_t>(summary.printed) == max_series) break;
    if (summary.printed) out << "\n";
    print_series(out, rows, s);
    ++summary.printed;
  }
  return summary;
}

}  // namespace kwb::history
