// The one place that turns comparison numbers into text, shared by the terminal table, JUnit XML
// and Markdown so that a ratio reads the same in all three.
#pragma once

#include <string>

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

// "2 failed, 1 slower, 3 faster, 40 same": the non-zero counts of a summary, in outcome order.
std::string outcome_counts(const OpSummary& s);

}  // namespace kwb
