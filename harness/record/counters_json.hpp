// A case's hardware counters (CaseCounters: kwb's own and those imported from Nsight Compute)
// and the measured roofline point derived from them (MeasuredWork), to and from JSON, in the
// forms and with the strictness of the record codec (record_json.hpp), which calls these for a
// record's "counters", "ncu_counters" and "derived.measured".
#pragma once

#include <nlohmann/json.hpp>

#include "harness/record/json_node.hpp"
#include "harness/record/record.hpp"

namespace kwb {

nlohmann::ordered_json to_json(const CaseCounters& counters);
CaseCounters counters_from_json(const json_read::Node& n);  // throws ReportError naming the path

nlohmann::ordered_json to_json(const MeasuredWork& measured);
MeasuredWork measured_from_json(const json_read::Node& n);

}  // namespace kwb
