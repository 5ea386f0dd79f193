// The JSON report: a run's environment plus one record per case, written as schema kwb.report/3
// (kwb.report/2 reports, without counters, are read too).
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
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/record/record_json.hpp"
#include "harness/record/report.hpp"

namespace kwb {

// Top-level keys, in this order: "schema", "run", "cases".
nlohmann::ordered_json report_to_json(const Report& report);
Report report_from_json(const nlohmann::ordered_json& j);

// Errors name the file; invalid JSON also gives line, column and byte of the parse error.
Report read_report_json(const std::filesystem::path& path);
// Pretty-printed (2-space indent), replaced atomically.
void write_report_json(const std::filesystem::path& path, const Report& report);


}  // namespace kwb
