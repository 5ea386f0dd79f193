// Terminal table of `kwb compare` (see compare_output.hpp).
#include "cli/compare_output.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "reports/compare/compare_text.hpp"

namespace kwb::cli {
namespace {

// Long lists of unmatched cases (a new op, a dropped dtype) are cut here; the Markdown has them all.
constexpr std::size_t kMaxListed = 20;

const char* colour_of(CaseOutcome o) {
  switch (o) {
    case CaseOutcome::failed:
    case CaseOutcome::slower: return "\033[31m";  // red
    case CaseOutcome::faster: return "\033[32m";  // green
    case CaseOutcome::ambiguous: return "\033[33m";  // yellow
    case CaseOutcome::same:
    case CaseOutcome::not_timed: return "\033[2m";  // dim
  }
  return "";
}

std::string painted(const std::string& text, const char* code, bool colour) {
  return colour ? code + text + "\033[0m" : text;
}

void print_list(std::ostream& out, const char* title, const std::vector<std::string>& keys) {
  if (keys.empty()) return;
  out << fmt::format("\n{} ({}):\n", title, keys.size());
  for (std::size_t i = 0; i < keys.size() && i < kMaxListed; ++i) out << "  " << keys[i] << "\n";
  if (keys.size() > kMaxListed) out << fmt::format("  ... and {} more (--md lists them all)\n", keys.size() - kMaxListed);
}

}  // namespace

void print_comparison(std::ostream& out, const CompareReport& r, bool colour) {
  out << fmt::format("kwb compare: BASE {}  NEW {}\n", r.base_name, r.new_name);
  for (const std::string& line : gate_lines(r)) out << "  " << line << "\n";
  if (!r.environment.empty()) {
    out << painted("ENVIRONMENT DIFFERS: these reports were not measured alike", "\033[1;33m", colour) << "\n";
    for (const EnvDifference& d : r.environment)
      out << fmt::format("  {:<13} BASE: {}\n  {:<13} NEW:  {}\n", d.what, d.base, "", d.next);
  }
  // The outcome column fits its longest label ("ambiguous (throttled)" when a case has it).
  std::size_t width = 10;
  for (const ComparedCase& c : r.cases) width = std::max(width, c.outcome_label().size());
  out << fmt::format("\n{:<{}} {:>8} {:>7} {:>16} {:>8} {:>10} {:>10} {:>5}  {}\n", "outcome", width, "NEW/BASE",
                     "change", "95% interval", "p", "BASE us", "NEW us", "thr", "case");
  for (const ComparedCase* c : by_largest_change(r)) {
    const Decision& d = c->decision;
    const std::string outcome = c->outcome == CaseOutcome::failed ? "FAILED" : c->outcome_label();
    out << painted(fmt::format("{:<{}}", outcome, width), colour_of(c->outcome), colour)
        << fmt::format(" {:>8} {:>7} {:>16} {:>8} {:>10} {:>10} {:>5}  {}\n", format_ratio(d.ratio.ratio),
                       format_change(d.ratio.ratio), format_interval(d.ratio), format_p(d.p_value),
                       format_us(d.base_median_us), format_us(d.new_median_us), format_percent(c->threshold), c->key);
    if ((c->outcome != CaseOutcome::same && c->outcome != CaseOutcome::faster) || c->first)
      out << fmt::format("{:<{}}{}\n", "", width + 2, c->note);
    if (c->first) out << fmt::format("{:<{}}{}\n", "", width + 2, first_verdict_text(*c));
  }
  if (r.cases.empty()) out << "  (no case is in both reports)\n";

  out << fmt::format("\n{:<24} {:>16}  {}\n", "op", "geomean NEW/BASE", "cases");
  auto summary = [&](const OpSummary& s) {
    out << fmt::format("{:<24} {:>8} {:>7}  {}\n", s.op, format_ratio(s.geomean_ratio), format_change(s.geomean_ratio),
                       outcome_counts(s));
  };
  for (const OpSummary& s : r.ops) summary(s);
  summary(r.overall);
  print_list(out, "Only in BASE (missing from NEW)", r.only_in_base);
  print_list(out, "Only in NEW (not in BASE)", r.only_in_new);
  print_list(out, "Skipped in NEW, timed in BASE", r.newly_skipped);
  out << "\n" << painted("Result: " + result_text(r), r.fails() ? "\033[1;31m" : "\033[1;32m", colour)
      << fmt::format(" ({})\n", outcome_counts(r.overall));
}

}  // namespace kwb::cli
