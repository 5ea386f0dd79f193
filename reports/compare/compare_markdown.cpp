// Markdown writer for `kwb compare` (see compare_markdown.hpp).
#include "reports/compare/compare_markdown.hpp"

#include <fmt/format.h>

#include "reports/compare/compare_text.hpp"
#include "harness/record/atomic_file.hpp"

namespace kwb {
namespace {

// A table cell: '|' would end the cell and a newline the row.
std::string cell(std::string_view text) {
  std::string out;
  for (char ch : text) {
    if (ch == '|') out += "\\|";
    else if (ch == '\n' || ch == '\r') out += ' ';
    else out += ch;
  }
  return out;
}

std::string count(const OpSummary& s, CaseOutcome o) {
  auto it = s.counts.find(o);
  return std::to_string(it == s.counts.end() ? 0 : it->second);
}

std::string summary_row(const OpSummary& s, bool bold) {
  const std::string name = bold ? fmt::format("**{}**", s.op) : fmt::format("`{}`", cell(s.op));
  return fmt::format("| {} | {} ({}) | {} | {} | {} | {} | {} | {} |\n", name, format_ratio(s.geomean_ratio),
                     format_change(s.geomean_ratio), count(s, CaseOutcome::failed), count(s, CaseOutcome::slower),
                     count(s, CaseOutcome::faster), count(s, CaseOutcome::ambiguous), count(s, CaseOutcome::same),
                     count(s, CaseOutcome::not_timed));
}

void list_section(std::string& md, const std::string& title, const std::vector<std::string>& keys) {
  if (keys.empty()) return;
  md += fmt::format("\n### {} ({})\n\n", title, keys.size());
  for (const auto& k : keys) md += "- `" + k + "`\n";
}

}  // namespace

std::string compare_markdown(const CompareReport& r) {
  std::string md = fmt::format("# kwb compare: `{}` -> `{}`\n\n", cell(r.base_name), cell(r.new_name));
  md += fmt::format("**Result: {}**", result_text(r));
  md += fmt::format(" ({}; geometric mean NEW/BASE {}, {}).\n\n", outcome_counts(r.overall),
                    format_ratio(r.overall.geomean_ratio), format_change(r.overall.geomean_ratio));
  md += fmt::format("Verdicts from the {:.0f}% bootstrap interval of the ratio of medians ({} resamples) against "
                    "a band of +- the threshold, widened to a minimum effect of {} us and to the case's run-to-run "
                    "spread where other runs of BASE give it, and a Mann-Whitney U test at p < {}; a slower or "
                    "faster verdict the two sides' clocks could explain is ambiguous (throttled).\n\n",
                    r.settings.confidence * 100, r.settings.resamples, r.settings.min_effect_us, r.settings.alpha);
  for (const std::string& line : gate_lines(r)) md += "- " + cell(line) + "\n";

  if (r.environment.empty()) {
    md += "\n## Environment\n\nSame GPU, driver, CUDA runtime, mode, flush, launch, preset and timer in both reports.\n";
  } else {
    md += "\n## Environment differs\n\nThe two reports were not measured alike; read the ratios with that in mind.\n\n";
    md += "| | BASE | NEW |\n|---|---|---|\n";
    for (const EnvDifference& d : r.environment)
      md += fmt::format("| {} | {} | {} |\n", cell(d.what), cell(d.base), cell(d.next));
  }

  md += "\n## Summary per op\n\n";
  md += "| op | geomean NEW/BASE | failed | slower | faster | ambiguous | same | not timed |\n";
  md += "|---|---|---|---|---|---|---|---|\n";
  for (const OpSummary& s : r.ops) md += summary_row(s, false);
  md += summary_row(r.overall, true);

  md += "\n## Changed cases\n\n";
  std::string rows;
  for (const ComparedCase* c : by_largest_change(r)) {
    if (c->outcome == CaseOutcome::same) continue;
    rows += fmt::format("| {} | `{}` | {} | {} | {} | {} | {} | {} | {} |\n", c->outcome_label(), cell(c->key),
                        format_ratio(c->decision.ratio.ratio), format_change(c->decision.ratio.ratio),
                        format_interval(c->decision.ratio), format_p(c->decision.p_value),
                        format_us(c->decision.base_median_us), format_us(c->decision.new_median_us), cell(c->note));
  }
  if (rows.empty()) {
    md += "None: every matched case is the same.\n";
  } else {
    md += "| outcome | case | NEW/BASE | change | 95% interval | p | BASE us | NEW us | why |\n";
    md += "|---|---|---|---|---|---|---|---|---|\n" + rows;
  }
  std::string confirmed;
  for (const ComparedCase& c : r.cases) {
    if (!c.first) continue;
    const Decision& f = c.first->decision;
    confirmed += fmt::format("| {} | `{}` | {} {} | {} {} {} | {} | {} |\n", c.outcome_label(), cell(c.key),
                             format_ratio(c.decision.ratio.ratio), format_interval(c.decision.ratio),
                             c.first->throttled ? "ambiguous (throttled)" : std::string(to_string(c.first->outcome)),
                             format_ratio(f.ratio.ratio), format_interval(f.ratio), c.confirm_rounds, cell(c.note));
  }
  if (!confirmed.empty()) {
    md += "\n## Confirmed by re-measurement (--confirm)\n\n";
    md += "Each case measured again on this machine's GPU, BASE's build and NEW's in turn, round by round; the "
          "interval is the Student t interval of the rounds' ratios. The confirmed verdict replaces the first.\n\n";
    md += "| confirmed | case | ratio, interval | first verdict, ratio, interval | rounds | why |\n";
    md += "|---|---|---|---|---|---|\n" + confirmed;
  }
  if (!r.only_in_base.empty() || !r.only_in_new.empty()) md += "\n## Unmatched cases\n";
  list_section(md, "Only in BASE", r.only_in_base);
  list_section(md, "Only in NEW", r.only_in_new);
  if (!r.newly_skipped.empty()) md += "\n## Skipped in NEW\n";
  list_section(md, "Skipped in NEW, timed in BASE", r.newly_skipped);
  return md;
}

void write_compare_markdown(const std::filesystem::path& path, const CompareReport& report) {
  atomic_write_file(path, compare_markdown(report));
}

}  // namespace kwb
