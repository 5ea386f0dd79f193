// JUnit XML writer for `kwb compare` (see junit_xml.hpp).
#include "reports/compare/junit_xml.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "reports/compare/compare_text.hpp"
#include "harness/record/atomic_file.hpp"

namespace kwb {
namespace {

struct Testcase {
  std::string name;
  std::string body;  // <failure>, <skipped> and <system-out> elements, already escaped
  bool failure = false, skipped = false;
};

std::string attr(std::string_view text) { return fmt::format("\"{}\"", xml_escape(text)); }

// A <failure> for a case that fails the gate only because --fail-on (or BASE's suite) names its class.
std::string fail_on_failure(FailOnClass c, const std::string& message, const std::string& text) {
  return fmt::format("      <failure message={} type={}>{}</failure>\n", attr(message), attr(std::string(to_string(c))),
                     xml_escape(text));
}

Testcase testcase_of(const ComparedCase& c, const CompareReport& r) {
  Testcase t;
  t.name = c.key;
  std::string line = fmt::format("{}: {}; {}", c.outcome_label(), evidence(c), c.note);
  if (c.first) line += "; " + first_verdict_text(c);
  const bool newly_skipped = std::find(r.newly_skipped.begin(), r.newly_skipped.end(), c.key) != r.newly_skipped.end();
  if (c.outcome == CaseOutcome::ambiguous && r.fails_on(FailOnClass::ambiguous)) {
    t.failure = true;
    t.body = fail_on_failure(FailOnClass::ambiguous, c.outcome_label() + " (--fail-on ambiguous): " + c.note, line);
  } else if (newly_skipped && r.fails_on(FailOnClass::skipped)) {
    t.failure = true;
    t.body = fail_on_failure(FailOnClass::skipped, "skipped in NEW, timed in BASE (--fail-on skipped): " + c.note, line);
  } else if (c.outcome == CaseOutcome::slower || c.outcome == CaseOutcome::failed) {
    t.failure = true;
    const std::string message =
        c.outcome == CaseOutcome::slower
            ? fmt::format("slower: NEW/BASE {} ({}), 95% interval {}, p {}, threshold {}", format_ratio(c.decision.ratio.ratio),
                          format_change(c.decision.ratio.ratio), format_interval(c.decision.ratio),
                          format_p(c.decision.p_value), format_percent(c.decision.tolerance))
            : c.note;
    t.body = fmt::format("      <failure message={} type={}>{}</failure>\n", attr(message),
                         attr(c.outcome == CaseOutcome::slower ? "slower" : "failed"), xml_escape(line));
  } else if (c.outcome == CaseOutcome::not_timed) {
    t.skipped = true;
    t.body = fmt::format("      <skipped message={}/>\n", attr(c.note));
  } else {
    t.body = fmt::format("      <system-out>{}</system-out>\n", xml_escape(line));
  }
  return t;
}

// The op of a case identity: the text before its first ':'.
std::string op_of_key(const std::string& key) { return key.substr(0, key.find(':')); }

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += (u < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') ? '?' : ch;
    }
  }
  return out;
}

std::string compare_junit_xml(const CompareReport& report) {
  // Suites in the order of the summary, then any op seen only among the unmatched cases.
  std::vector<std::string> ops;
  std::map<std::string, std::vector<Testcase>> by_op;
  auto suite = [&](const std::string& op) -> std::vector<Testcase>& {
    if (!by_op.contains(op)) ops.push_back(op);
    return by_op[op];
  };
  for (const OpSummary& s : report.ops) suite(s.op);
  for (const ComparedCase& c : report.cases) suite(c.op).push_back(testcase_of(c, report));
  for (const auto& key : report.only_in_base) {
    if (report.fails_on(FailOnClass::missing))
      suite(op_of_key(key)).push_back({key, fail_on_failure(FailOnClass::missing, "missing from NEW (--fail-on missing)",
                                                            "only in BASE: missing from NEW"), true, false});
    else
      suite(op_of_key(key)).push_back({key, "      <skipped message=\"only in BASE: missing from NEW\"/>\n", false, true});
  }
  for (const auto& key : report.only_in_new)
    suite(op_of_key(key)).push_back({key, "      <skipped message=\"only in NEW: not in BASE\"/>\n", false, true});

  std::string properties = "    <properties>\n";
  properties += fmt::format("      <property name=\"base\" value={}/>\n", attr(report.base_name));
  properties += fmt::format("      <property name=\"new\" value={}/>\n", attr(report.new_name));
  for (const std::string& line : gate_lines(report)) {  // "thresholds: ...", "fails on: ...", "run-to-run spread: ..."
    const auto colon = line.find(':');
    properties += fmt::format("      <property name={} value={}/>\n", attr("gate." + line.substr(0, colon)),
                              attr(line.substr(colon + 2)));
  }
  for (const EnvDifference& d : report.environment)
    properties += fmt::format("      <property name={} value={}/>\n", attr("env." + d.what),
                              attr("BASE: " + d.base + " | NEW: " + d.next));
  properties += "    </properties>\n";

  int total = 0, failures = 0, skipped = 0;
  std::string suites;
  for (const std::string& op : ops) {
    const auto& cases = by_op[op];
    int f = 0, s = 0;
    for (const Testcase& t : cases) f += t.failure, s += t.skipped;
    suites += fmt::format("  <testsuite name={} tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n",
                          attr(op), cases.size(), f, s);
    suites += properties;
    for (const Testcase& t : cases)
      suites += fmt::format("    <testcase name={} classname={}>\n{}    </testcase>\n", attr(t.name),
                            attr("kwb.compare." + op), t.body);
    suites += "  </testsuite>\n";
    total += static_cast<int>(cases.size());
    failures += f;
    skipped += s;
  }
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                     "<testsuites name=\"kwb compare\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n"
                     "{}</testsuites>\n",
                     total, failures, skipped, suites);
}

void write_compare_junit_xml(const std::filesystem::path& path, const CompareReport& report) {
  atomic_write_file(path, compare_junit_xml(report));
}

}  // namespace kwb
