// JUnit XML of a comparison, for CI systems (GitLab, Jenkins, GitHub test reporters): one
// <testsuite> per op, one <testcase> per matched case. A case slower or failed in NEW carries a
// <failure> with its ratio, interval and p-value; a case not timed on either side, or found in one
// report only, is <skipped> with the reason. Environment differences are <property> elements of
// every suite ("env.GPU" = "BASE: ... | NEW: ..."), so they show next to the failures.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "reports/compare/compare_report.hpp"

namespace kwb {

// `text` escaped for XML attribute values and character data: & < > " ' become entities, and
// control characters XML 1.0 cannot hold (all below 0x20 but tab, newline, CR) become '?'.
std::string xml_escape(std::string_view text);

std::string compare_junit_xml(const CompareReport& report);

// Written atomically (harness/record/atomic_file.hpp).
void write_compare_junit_xml(const std::filesystem::path& path, const CompareReport& report);

}  // namespace kwb
