// The JSON report: a run's environment plus one record per case, written as schema kwb.report/1.
//
// Everything goes through nlohmann::ordered_json, never nlohmann::json: the plain one sorts object
// keys, which would turn a shape {"rows":..,"cols":..} into {"cols":..,"rows":..} and lose the
// op's axis order. Numbers stay JSON numbers, enums their string names, and an absent optional is
// an absent key. Non-finite doubles (JSON has none) are written as the strings "nan", "inf" and
// "-inf", and read back from them.
//
// Reading is strict: a missing key, a wrong type, an unknown enum name or another schema throws
// ReportError whose message starts with the JSON path, e.g.
//   cases[3].timing.span.median: expected a number, got string
// Unknown keys are ignored (so "shape_compact", written for people, is never read back).
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/record.hpp"

namespace kwb {

inline constexpr const char* kReportSchema = "kwb.report/1";

struct Report {
  RunInfo run;
  std::vector<CaseRecord> cases;
};

// Any report, CSV or journal that cannot be read back; what() says where and why.
struct ReportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

nlohmann::ordered_json to_json(const CaseRecord& record);
CaseRecord case_from_json(const nlohmann::ordered_json& j);

nlohmann::ordered_json to_json(const RunInfo& run);
RunInfo run_info_from_json(const nlohmann::ordered_json& j);

// Also used on their own: the worker's hello and the ceilings cache.
nlohmann::ordered_json to_json(const DeviceInfo& device);
DeviceInfo device_info_from_json(const nlohmann::ordered_json& j);
nlohmann::ordered_json to_json(const Ceilings& ceilings);
Ceilings ceilings_from_json(const nlohmann::ordered_json& j);

// Top-level keys, in this order: "schema", "run", "cases".
nlohmann::ordered_json report_to_json(const Report& report);
Report report_from_json(const nlohmann::ordered_json& j);

// Errors name the file; invalid JSON also gives line, column and byte of the parse error.
Report read_report_json(const std::filesystem::path& path);
// Pretty-printed (2-space indent), replaced atomically.
void write_report_json(const std::filesystem::path& path, const Report& report);

// The whole file as bytes; throws ReportError naming the path when it cannot be read.
std::string read_text_file(const std::filesystem::path& path);

// Compact or indented text of `j`; invalid UTF-8 in strings (a stray byte in a command line)
// is replaced with U+FFFD instead of throwing, so a finished run always gets its report.
std::string dump_json(const nlohmann::ordered_json& j, int indent = -1);

}  // namespace kwb
