// What `kwb compare --confirm` re-measures, and under which settings: the cases the reports could
// not settle (slower, faster, ambiguous), each as the CaseRequest `kwb run` would send its worker,
// with the settings both reports were measured under. Pure: reports in, requests or refusals out.
//
// The settings that decide what a case measures (mode, flush, launch, preset, seed) must agree between
// BASE and NEW: the interleaved rounds run both sides under one set of them, so a confirmed ratio
// between reports measured differently would answer another question than the one compared.
// The test-only slowdown switch (harness/worker/test_slowdown.hpp) is part of how a report was
// produced, so each side's worker runs with its own report's switch, or without one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/catalogue/case_request.hpp"
#include "harness/record/json_report.hpp"
#include "reports/compare/compare_report.hpp"

namespace kwb {

// slower, faster or ambiguous (throttled or not): the verdicts a re-measurement can settle.
// Failed and untimed cases are not suspects: a failure is a failure whatever the timing.
bool is_suspect(const ComparedCase& c);

// The suspects' identities, in the report's order.
std::vector<std::string> suspect_keys(const CompareReport& report);

// Why BASE and NEW cannot be re-measured under one set of settings: "preset: BASE quick, NEW
// default; ..." with how to fix it; nothing when mode, flush, launch, preset and seed agree.
std::optional<std::string> confirm_settings_problem(const Report& base, const Report& next,
                                                    const std::string& base_name, const std::string& new_name);

// The request that measures `record` (a case of BASE) again under BASE's settings; index is its
// position in the confirm run. Throws ReportError when BASE does not record a setting it needs.
CaseRequest confirm_request(const CaseRecord& record, const Report& base, const std::string& base_name, int index);

// The KWB_TEST_SLOWDOWN value ("OP:VARIANT:FRACTION[,...]") the report was measured with: its
// `test_slowdown_value` setting, the exact value the workers parsed; for reports written before
// that setting, rebuilt from the `test_slowdown` text (percentages to 3 significant digits).
// Nothing when the switch was off. Throws ReportError for a setting it cannot read back.
std::optional<std::string> test_slowdown_of(const Report& report, const std::string& name);

}  // namespace kwb
