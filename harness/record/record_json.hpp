// The record codec (see record_json.cpp): one JSON form per record type, shared by the worker
// protocol, the journal, the reports and the ceilings cache.
//
// Everything goes through nlohmann::ordered_json, never nlohmann::json: the plain one sorts object
// keys, which would turn a shape {"rows":..,"cols":..} into {"cols":..,"rows":..} and lose the
// op's axis order. Numbers stay JSON numbers, enums their string names, and an absent optional is
// an absent key. Non-finite doubles (JSON has none) are written as the strings "nan", "inf" and
// "-inf", and read back from them. Reading is strict: a missing key, a wrong type or an unknown
// enum name throws ReportError whose message starts with the JSON path. Unknown keys are ignored
// (so "shape_compact", written for people, is never read back).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "harness/record/device_json.hpp"
#include "harness/record/json_node.hpp"
#include "harness/record/record.hpp"

namespace kwb {

nlohmann::ordered_json to_json(const CaseRecord& record);
CaseRecord case_from_json(const nlohmann::ordered_json& j);
CaseRecord case_from_json(const json_read::Node& n);  // errors carry n's path

nlohmann::ordered_json to_json(const RunInfo& run);
RunInfo run_info_from_json(const nlohmann::ordered_json& j);
RunInfo run_info_from_json(const json_read::Node& n);

// A shape as {axis: integer or choice name} and tunables as {name: value}, in their declared
// order: the forms every JSON the tool writes uses for them.
nlohmann::ordered_json shape_json(const Shape& shape);
nlohmann::ordered_json tunables_json(const TunableValues& tunables);

// DeviceInfo and Ceilings: device_json.hpp (included here for the callers of this codec).

// Compact or indented text of `j`; invalid UTF-8 in strings (a stray byte in a command line)
// is replaced with U+FFFD instead of throwing, so a finished run always gets its report.
std::string dump_json(const nlohmann::ordered_json& j, int indent = -1);

}  // namespace kwb
