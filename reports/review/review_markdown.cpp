// The Markdown review report: headings, bullet facts and pipe tables.
#include "reports/review/review_markdown.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "reports/review/review_tables.hpp"
#include "harness/record/atomic_file.hpp"
#include "reports/select/selection_markdown.hpp"

namespace kwb {

namespace {

// A cell may hold any text from the report: pipes would split it, newlines end the row.
std::string md_cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

}  // namespace

std::string markdown_table(const review::Table& t) {
  std::string s = "|";
  // Appended piecewise: GCC 12 warns (-Wrestrict, a known false positive) on " " + x + " |".
  for (const auto& h : t.headers) s.append(" ").append(md_cell(h)).append(" |");
  s += "\n|";
  for (std::size_t i = 0; i < t.headers.size(); ++i)
    s += i < t.numeric.size() && t.numeric[i] ? " ---: |" : " --- |";
  s += "\n";
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    s += "|";
    for (std::size_t i = 0; i < t.rows[r].size(); ++i) {
      // A figure beyond its usual threshold is marked, as the HTML highlights it.
      const bool flagged = r < t.flagged.size() && i < t.flagged[r].size() && t.flagged[r][i];
      s.append(" ").append(md_cell(t.rows[r][i])).append(flagged ? " ! |" : " |");
    }
    s += "\n";
  }
  return s + "\n";
}

namespace {
std::string table_md(const review::Table& t) { return markdown_table(t); }
}  // namespace

std::string review_markdown(const review::ReviewModel& m) {
  std::string s = fmt::format("# Kernel Workbench review: {}\n\n", m.run.device ? m.run.device->name : "unknown GPU");
  for (const auto& [k, v] : review::title_facts(m))
    s += fmt::format("- **{}**: {}\n", k, k == "Command" ? "`" + v + "`" : v);
  s += fmt::format("\n{} cases, {} failed, {} skipped, {} finding(s) (see *Failures and warnings*).\n\n",
                   m.cases_total, m.cases_failed, m.cases_skipped, m.findings.size());

  s += "## Environment and settings\n\n" + table_md(review::environment_table(m));
  s += "### Ceilings\n\n" + table_md(review::ceilings_table(m));

  s += "## Roofline\n\n";
  s += fmt::format("The chart is in the HTML report (`kwb report FILE --html OUT.html`). {} timed case(s) "
                   "against {} ceiling(s); each case's intensity, rate and % of roofline are in the tables "
                   "below.\n\n",
                   m.points.size(), m.ceilings.size());
  if (const auto measured = std::count_if(m.points.begin(), m.points.end(),
                                          [](const review::RooflinePoint& p) { return p.measured.has_value(); });
      measured > 0)
    s += fmt::format("{} of them also at their measured intensity (hardware counters: the FLOPs executed, or the "
                     "model's where none were counted, over the DRAM bytes measured); their traffic ratios are in "
                     "*Hardware counters per op*.\n\n",
                     measured);

  s += "## Speedups: unfused baseline against the best fused variant\n\n";
  s += m.speedups.empty() ? "No shape has both a passed baseline and a passed fused variant.\n\n"
                          : std::string(review::kSpeedupMathNote) + "\n\n" + table_md(review::speedup_table(m));

  s += "## Fastest variant per shape\n\n" + selection_section_markdown(m.selection);

  s += "## Results per op\n\n";
  for (const review::OpGroup& g : m.groups)
    s += fmt::format("### {} ({}-bound)\n\n", g.op, g.compute_bound ? "compute" : "memory") +
         table_md(review::op_table(g));

  if (m.counter_summary.cases_asked > 0) {
    s += "## Hardware counters per op\n\n" + review::counters_summary_text(m.counter_summary) + "\n\n";
    for (const review::CounterGroup& g : m.counters) {
      s += "### " + g.op + "\n\n" + table_md(review::counters_table(g));
      const auto attention = review::counters_attention_lines(g);
      if (!attention.empty()) {
        s += "Beyond the usual thresholds (marked `!`):\n\n";
        for (const std::string& line : attention) s += "- " + line + "\n";
        s += "\n";
      }
    }
    const auto notes = review::counters_column_notes(m.counters);
    if (!notes.empty()) {
      s += "What the columns mean:\n\n";
      for (const std::string& note : notes) s += "- " + note + "\n";
      s += "\n";
    }
  }

  s += "## Sweeps\n\n";
  if (m.sweeps.empty()) s += "No op was measured at three or more values of one axis.\n\n";
  else s += "Charts in the HTML report; in words:\n\n";
  for (const review::SweepChart& c : m.sweeps) s += "- " + review::sweep_summary(c) + "\n";
  if (!m.sweeps.empty()) s += "\n";

  s += "## Failures and warnings\n\n";
  s += m.findings.empty() ? "None: every case passed, converged, ran at full clock and stayed under its ceilings.\n"
                          : table_md(review::findings_table(m));
  return s;
}

void write_review_markdown(const std::filesystem::path& path, const review::ReviewModel& model) {
  atomic_write_file(path, review_markdown(model));
}

}  // namespace kwb
