// The per-op regression thresholds a suite writes into its report, `run.suite.thresholds`:
// {"default": 0.03, "rmsnorm_fwd": 0.02} (fractions). Optional: a report from a plain `kwb run`
// has none, and a `run.suite` that is not an object is left to the suite code to read. Where the
// thresholds are present they are read strictly, with the JSON path of any fault.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace kwb {

// Throws ReportError "run.suite.thresholds.rmsnorm_fwd: ..." for a value that is not a number in (0, 1).
std::map<std::string, double> suite_thresholds_from_json(const nlohmann::ordered_json& report);

// The same from a report file (already read once by read_report_json, so it parses); errors name the file.
std::map<std::string, double> read_suite_thresholds(const std::filesystem::path& path);

}  // namespace kwb
