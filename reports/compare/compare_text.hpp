// The one place that turns comparison numbers into text, shared by the terminal table, JUnit XML
// and Markdown so that a ratio reads the same in all three.
#pragma once

#include <string>
#include <vector>

#include "reports/compare/compare_report.hpp"

namespace kwb {

std::string format_ratio(double ratio);               // "1.052", "-" when unknown
std::string format_change(double ratio);              // "+5.2%", "-0.3%", "-" when unknown
std::string format_interval(const RatioInterval& r);  // "[1.047, 1.058]", "-" when not computed
std::string format_p(double p);                       // "3.1e-12", "0.42", "-" when not computed
std::string format_us(double us);                     // "12.35", "-" when unknown
std::string format_percent(double fraction);          // 0.03 -> "3%"

// "ratio 1.052 [1.047, 1.058], p 3.1e-12, BASE 12.35 us, NEW 12.99 us": the evidence of a verdict.
std::string evidence(const ComparedCase& c);

// For a case --confirm re-measured, what the reports alone said: "first verdict (from the reports):
// ambiguous (throttled), ratio 1.048 [1.046, 1.049], p 5.0e-97: <its reason>"; empty otherwise.
std::string first_verdict_text(const ComparedCase& c);

// "2 failed, 1 slower, 3 faster, 40 same": the non-zero counts of a summary, in outcome order.
std::string outcome_counts(const OpSummary& s);

// "regression", "fails the gate: 2 ambiguous, 1 missing from NEW" (a --fail-on class present) or
// "no regression": what the exit code says, in words.
std::string result_text(const CompareReport& r);

// The gate's rules, one line each: where the thresholds and fail-on classes came from, the
// run-to-run spread when other runs of BASE gave it, and what --confirm re-measured.
std::vector<std::string> gate_lines(const CompareReport& r);

}  // namespace kwb
