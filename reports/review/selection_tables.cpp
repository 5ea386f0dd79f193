// Cells of the selection table and its summary lines (see selection_tables.hpp).
#include "reports/review/selection_tables.hpp"

#include <fmt/format.h>

#include "harness/catalogue/math_label.hpp"
#include "harness/catalogue/shape_label.hpp"

namespace kwb::review {

namespace {

std::string shape_cell(std::string_view op, const Shape& shape, Mode mode) {
  // Hot mode is rare and changes the meaning of every time: say it where the shape is read.
  return shape_label(op, shape) + (mode == Mode::hot ? ", hot" : "");
}

std::string counts_text(const std::map<std::string, int>& counts) {
  std::string s;
  for (const auto& [what, n] : counts) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", n, what);
  return s;
}

// "2.10x", or "2.10x (tf32 vs fp32)" where the winner ran other math than the baseline.
std::string speedup_cell(double speedup, const select::Candidate& winner, const select::Candidate& baseline) {
  const std::string maths = math_comparison(winner.math, baseline.math);
  return fmt::format("{:.2f}x", speedup) + (maths.empty() ? "" : " (" + maths + ")");
}

}  // namespace

Table selection_table(const select::Selection& s) {
  Table t{{"op", "dtype", "shape", "winner", "us", "runner-up", "us", "margin", "verdict", "vs baseline"},
          {},
          {false, false, false, false, true, false, true, true, false, true}};
  for (const select::SelectionEntry& e : s.entries) {
    const select::Candidate* r = e.runner_up();
    t.rows.push_back({e.op, std::string(to_string(e.dtype)), shape_cell(e.op, e.shape, e.mode),
                      select::candidate_label(e.winner()), fmt::format("{:.2f}", e.winner().median_us),
                      r ? select::candidate_label(*r) : "-", r ? fmt::format("{:.2f}", r->median_us) : "-",
                      r ? fmt::format("{:.1f}%", e.margin_pct) : "-", e.clear ? "clear" : "within noise",
                      e.speedup_vs_baseline ? speedup_cell(*e.speedup_vs_baseline, e.winner(), *e.baseline) : "-"});
  }
  return t;
}

std::vector<std::string> selection_summary_lines(const select::Selection& s) {
  std::vector<std::string> lines;
  for (const select::OpWins& w : s.per_op) {
    std::string line = w.op + ":";
    for (std::size_t i = 0; i < w.wins.size(); ++i)
      line += i == 0 ? fmt::format(" {} wins {} of {} shape(s)", w.wins[i].first, w.wins[i].second, w.groups)
                     : fmt::format(", {} {}", w.wins[i].first, w.wins[i].second);
    lines.push_back(line);
  }
  return lines;
}

std::string selection_note(const select::Selection& s) {
  std::string note =
      "The winner is the fastest verified, timed case by median span (each tunable configuration counts "
      "alone); margin is the runner-up's median over the winner's. \"clear\": above the minimum margin and "
      "above the noise; ";
  if (s.used_samples && s.used_p10_p90)
    note += "the noise was judged on the per-sample arrays (bootstrap interval and U test, as kwb compare) "
            "where the report has them, else on the p10-p90 ranges (clear when they do not overlap).";
  else if (s.used_samples)
    note += "the noise was judged on the per-sample arrays (bootstrap interval and U test, as kwb compare).";
  else
    note += "the report holds no per-sample arrays, so the noise was judged on the p10-p90 ranges (clear when "
            "they do not overlap).";
  return note;
}

std::vector<std::string> unselected_lines(const select::Selection& s) {
  std::vector<std::string> lines;
  for (const select::UnselectedGroup& g : s.unselected) {
    std::string reasons;
    for (const auto& [why, n] : g.excluded_reasons) reasons += fmt::format("{}{}x {}", reasons.empty() ? "" : "; ", n, why);
    lines.push_back(fmt::format("{} {} {}: no candidate ({}: {})", g.op, to_string(g.dtype),
                                shape_cell(g.op, g.shape, g.mode), counts_text(g.excluded), reasons));
  }
  return lines;
}

}  // namespace kwb::review
