// The HTML review report: the model's tables and charts in one page, styled for screen and A4.
#include "reports/review/review_html.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "reports/review/review_charts.hpp"
#include "reports/review/review_tables.hpp"
#include "reports/review/selection_tables.hpp"
#include "reports/review/svg_chart.hpp"
#include "harness/record/atomic_file.hpp"
#include "harness/record/report.hpp"

namespace kwb {

namespace {

using review::Table;
using review::xml_escape;

// Print: A4 portrait with narrow margins; charts scale to the page width; a table row, a chart
// and a heading with what follows it are never split across pages.
constexpr const char* kStyle = R"(
body { font: 14px/1.4 -apple-system, "Segoe UI", "DejaVu Sans", Arial, sans-serif; color: #222;
       margin: 24px auto; max-width: 1320px; padding: 0 16px; }
h1 { font-size: 24px; margin: 0 0 8px; }
h2 { font-size: 19px; margin: 28px 0 8px; border-bottom: 1px solid #ccc; padding-bottom: 4px; }
h3 { font-size: 16px; margin: 18px 0 6px; }
dl.facts { display: grid; grid-template-columns: max-content auto; gap: 2px 16px; margin: 0; }
dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; font-family: monospace; word-break: break-all; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 12.5px; max-width: 100%; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: left; vertical-align: top; }
td.num { white-space: nowrap; }  /* a wide table wraps its names and shapes (at line-break hints), never a number */
th { background: #f0f0f0; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr:nth-child(even) td { background: #fafafa; }
.summary { padding: 8px 12px; background: #f5f8fc; border-left: 4px solid #4e79a7; }
.bad { border-left-color: #e15759; background: #fdf3f3; }
svg.chart { max-width: 100%; height: auto; display: block; margin: 6px 0 14px; }
svg .grid { stroke: #e4e4e4; stroke-width: 1; }
svg text { font: 11px "DejaVu Sans", Arial, sans-serif; fill: #333; }
svg text.axis { font-size: 12px; } svg text.roof { font-size: 10.5px; }
svg circle.pt { stroke: #fff; stroke-width: 0.6; fill-opacity: 0.9; }
table td.flag { background: #fde8c8; font-weight: 600; }  /* a counter figure beyond its usual threshold */
ul.notes { color: #555; font-size: 12px; margin: 4px 0 12px; padding-left: 20px; }
.note { color: #666; font-size: 12px; }
@page { size: A4 portrait; margin: 12mm; }
@media print {
  body { margin: 0; max-width: none; font-size: 11px; padding: 0; }
  table { font-size: 8.5px; page-break-inside: auto; width: 100%; }
  th, td { padding: 2px 4px; overflow-wrap: anywhere; }  /* long variant names wrap, not overflow */
  tr, svg.chart, figure { page-break-inside: avoid; break-inside: avoid; }
  thead { display: table-header-group; }
  h2, h3 { page-break-after: avoid; break-after: avoid; }
  svg.chart { width: 100%; max-width: 180mm; }
  tr:nth-child(even) td { background: none; }
}
)";

// A text cell, escaped, with a line-break opportunity after each '_', ',' and '=' (variant names
// and shapes are long single words), so that a wide table can fit the page.
std::string breakable(const std::string& text) {
  std::string out;
  for (char c : xml_escape(text)) {
    out += c;
    if (c == '_' || c == ',' || c == '=') out += "<wbr/>";
  }
  return out;
}

std::string table_html(const Table& t) {
  std::string s = "<table>\n<thead><tr>";
  for (const auto& h : t.headers) s += "<th>" + xml_escape(h) + "</th>";
  s += "</tr></thead>\n<tbody>\n";
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const auto& row = t.rows[r];
    s += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i) {
      const bool flagged = r < t.flagged.size() && i < t.flagged[r].size() && t.flagged[r][i];
      const bool numeric = i < t.numeric.size() && t.numeric[i];
      std::string cls = numeric ? "num" : "";
      if (flagged) cls += cls.empty() ? "flag" : " flag";
      s += (cls.empty() ? "<td>" : "<td class=\"" + cls + "\">") + (numeric ? xml_escape(row[i]) : breakable(row[i])) +
           "</td>";
    }
    s += "</tr>\n";
  }
  return s + "</tbody>\n</table>\n";
}

std::string anchor(const std::string& text) {
  std::string id;
  for (char c : text) id += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '-';
  return id;
}

}  // namespace

std::string review_html(const review::ReviewModel& m) {
  const std::string gpu = m.run.device ? m.run.device->name : "unknown GPU";
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n";
  s += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n";
  s += fmt::format("<title>kwb review: {} ({})</title>\n", xml_escape(gpu), xml_escape(m.run.started_at));
  s += fmt::format("<style>{}</style>\n</head>\n<body>\n", kStyle);

  // 1. Title block.
  s += fmt::format("<h1>Kernel Workbench review: {}</h1>\n<dl class=\"facts\">\n", xml_escape(gpu));
  for (const auto& [k, v] : review::title_facts(m))
    s += fmt::format("<dt>{}</dt><dd>{}</dd>\n", xml_escape(k), xml_escape(v));
  s += "</dl>\n";
  const bool bad = m.cases_failed > 0 || !m.findings.empty();
  s += fmt::format("<p class=\"summary{}\">{} cases, {} failed, {} skipped, {} finding(s) listed under "
                   "<a href=\"#findings\">Failures and warnings</a>.</p>\n",
                   bad ? " bad" : "", m.cases_total, m.cases_failed, m.cases_skipped, m.findings.size());

  // 2. Environment, settings and ceilings.
  s += "<h2 id=\"environment\">Environment and settings</h2>\n" + table_html(review::environment_table(m));
  s += "<h3>Ceilings</h3>\n" + table_html(review::ceilings_table(m));

  // 3. Roofline.
  s += "<h2 id=\"roofline\">Roofline</h2>\n<figure>\n" + review::roofline_svg(m);
  s += "<figcaption class=\"note\">Log-log. Solid: measured ceilings; dashed: datasheet. One point per "
       "timed case, marked by op (a colour, then a shape after ten); hover a point for its case. Each measured "
       "roof is labelled once, with its datasheet twin's figure in brackets.";
  if (std::any_of(m.points.begin(), m.points.end(), [](const review::RooflinePoint& p) { return p.measured.has_value(); }))
    s += " A case with hardware counters also has a ring where they put it (the FLOPs executed over the DRAM bytes "
         "measured, at the executed FLOPs' rate; dashed join: no FLOP counters, the model's FLOPs), joined to its "
         "dot: a ring left of its dot moves more bytes per FLOP than its work model says.";
  s += "</figcaption>\n</figure>\n";

  // 4. Speedups.
  s += "<h2 id=\"speedups\">Speedups: unfused baseline against the best fused variant</h2>\n";
  s += m.speedups.empty() ? "<p class=\"note\">No shape has both a passed baseline and a passed fused variant.</p>\n"
                          : "<p class=\"note\">" + xml_escape(review::kSpeedupMathNote) + "</p>\n" +
                                table_html(review::speedup_table(m));

  // 4b. Fastest variant per shape (the same selection as `kwb select`).
  s += "<h2 id=\"selection\">Fastest variant per shape</h2>\n";
  if (m.selection.entries.empty()) {
    s += "<p class=\"note\">No verified, timed case: nothing to select.</p>\n";
  } else {
    s += "<ul>\n";
    for (const std::string& line : review::selection_summary_lines(m.selection)) s += "<li>" + xml_escape(line) + "</li>\n";
    s += "</ul>\n" + table_html(review::selection_table(m.selection));
    s += "<p class=\"note\">" + xml_escape(review::selection_note(m.selection)) + "</p>\n";
    const auto unselected = review::unselected_lines(m.selection);
    if (!unselected.empty()) {
      s += "<p>Nothing to select at:</p>\n<ul>\n";
      for (const std::string& line : unselected) s += "<li>" + xml_escape(line) + "</li>\n";
      s += "</ul>\n";
    }
  }

  // 5. Per-op tables.
  s += "<h2 id=\"ops\">Results per op</h2>\n";
  for (const review::OpGroup& g : m.groups)
    s += fmt::format("<h3 id=\"op-{}\">{} <span class=\"note\">({}-bound)</span></h3>\n", anchor(g.op),
                     xml_escape(g.op), g.compute_bound ? "compute" : "memory") +
         table_html(review::op_table(g));

  // 5b. Hardware counters per op (only where the run collected them).
  if (m.counter_summary.cases_asked > 0) {
    s += "<h2 id=\"counters\">Hardware counters per op</h2>\n";
    s += "<p class=\"note\">" + xml_escape(review::counters_summary_text(m.counter_summary)) + "</p>\n";
    for (const review::CounterGroup& g : m.counters) {
      s += fmt::format("<h3 id=\"counters-{}\">{}</h3>\n", anchor(g.op), xml_escape(g.op)) +
           table_html(review::counters_table(g));
      const auto attention = review::counters_attention_lines(g);
      if (!attention.empty()) {
        s += "<p>Beyond the usual thresholds (highlighted):</p>\n<ul>\n";
        for (const std::string& line : attention) s += "<li>" + xml_escape(line) + "</li>\n";
        s += "</ul>\n";
      }
    }
    const auto notes = review::counters_column_notes(m.counters);
    if (!notes.empty()) {
      s += "<p class=\"note\">What the columns mean:</p>\n<ul class=\"notes\">\n";
      for (const std::string& note : notes) s += "<li>" + xml_escape(note) + "</li>\n";
      s += "</ul>\n";
    }
  }

  // 6. Sweeps.
  s += "<h2 id=\"sweeps\">Sweeps</h2>\n";
  if (m.sweeps.empty()) s += "<p class=\"note\">No op was measured at three or more values of one axis.</p>\n";
  for (const review::SweepChart& c : m.sweeps)
    s += fmt::format("<figure>\n<h3>{} {} {}: {} against {}</h3>\n", xml_escape(c.op), xml_escape(c.dtype),
                     xml_escape(c.mode), xml_escape(c.metric), xml_escape(c.axis)) +
         review::sweep_svg(c) + "</figure>\n";

  // 7. Findings.
  s += "<h2 id=\"findings\">Failures and warnings</h2>\n";
  s += m.findings.empty() ? "<p>None: every case passed, converged, ran at full clock and stayed under its ceilings.</p>\n"
                          : table_html(review::findings_table(m));
  s += fmt::format("<p class=\"note\">Generated by kwb {} from a {} file. Every case can be "
                   "replayed with the repro command in the JSON report.</p>\n</body>\n</html>\n",
                   xml_escape(m.run.tool_version), kReportSchema);
  return s;
}

void write_review_html(const std::filesystem::path& path, const review::ReviewModel& model) {
  atomic_write_file(path, review_html(model));
}

}  // namespace kwb
